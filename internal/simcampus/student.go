package simcampus

// The demo student the simulated campus answers for: the student number
// its sessions are made for and the number and name its fixtures show (the
// card, the portal's scores). A tool that records a case against the
// campus scrubs both (harness record --campus).
const (
	DemoStudentID   = "2100012345"
	DemoStudentName = "张测试"
)
