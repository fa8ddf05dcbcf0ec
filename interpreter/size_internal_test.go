package interpreter

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// A run is one allocation per call; at most 512 bytes it is allocated
// without the header (and its type's pointer bitmap written per object)
// that larger objects carry.
func TestRunSize(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(run{}), uintptr(512))
}
