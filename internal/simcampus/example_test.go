package simcampus_test

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/pkuinfo/harness/internal/simcampus"
)

// A request with the demo session gets the card in the real envelope; the
// same request without it gets the card service's expiry answer.
func ExampleStart() {
	noon := time.Date(2026, 4, 15, 12, 30, 0, 0, time.FixedZone("CST", 8*3600))
	c, err := simcampus.Start(simcampus.WithClock(func() time.Time { return noon }))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	url := c.Services()["card"].Origin + "/berserker-app/ykt/tsm/queryCard?synAccessSource=h5"

	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("synjones-auth", c.Secrets()["card"].Headers["synjones-auth"])
	for _, r := range []*http.Request{req, must(http.NewRequest("GET", url, nil))} {
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, string(body))
	}
	// Output:
	// 200 {"code":200,"success":true,"msg":"操作成功","data":{"card":[{"sno":"2100012345","name":"张测试","account":"123456","cardname":"学生卡","lostflag":0,"freezeflag":0,"expdate":"20280731","elec_accamt":33270,"accinfo":[{"balance":33270,"name":"电子钱包","type":"000","daycostamt":1700,"daycostlimit":30000}]}]}}
	// 401 {"code":401,"success":false,"message":"token失效"}
}

func must(r *http.Request, err error) *http.Request {
	if err != nil {
		panic(err)
	}
	return r
}
