package review

import "github.com/pkuinfo/harness/manifest"

// Words say what a name means, in Chinese and in English, for a student
// reading a review sheet.
type Words struct {
	Zh string `json:"zh"`
	En string `json:"en"`
}

// String is "中文 (English)", or the English alone when there is no Chinese.
func (w Words) String() string {
	if w.Zh == "" {
		return w.En
	}
	return w.Zh + " (" + w.En + ")"
}

// services says what each built-in campus service is.
var services = map[string]Words{
	"iaaa":        {"统一身份认证", "the PKU unified login (IAAA)"},
	"portal":      {"北京大学门户", "the PKU portal: notices, course table, grades"},
	"card":        {"校园卡", "the campus card: balance, spending, payments"},
	"card-legacy": {"旧版校园卡系统", "the old campus card system"},
	"treehole":    {"北大树洞", "PKU Treehole: anonymous posts, also grades and course table"},
	"wproc":       {"办事大厅预约（班车等）", "the reservation hall: shuttle bus and other bookings"},
	"xiaobei":     {"小北（校园活动与讲座）", "Xiaobei: campus events and lectures"},
	"course":      {"教学网", "the course site (Blackboard): announcements, assignments"},
	"elective":    {"选课网", "course selection (elective)"},
	"dean":        {"教务部网站", "the Office of Educational Administration site"},
	"eecs":        {"信息科学技术学院网站", "the School of EECS site"},
	"simso":       {"学生信息服务（校历等）", "student information services: the school calendar"},
	"library":     {"图书馆", "the library"},
	"bdkj":        {"北大空间预约", "room booking"},
	"its":         {"校园网账号", "the campus network account (ITS)"},
	"cwfw":        {"财务综合服务", "the finance office services"},
}

// ServiceWords says what a campus service is; a service the engine does not
// know is said to be so (a host may know more services).
func ServiceWords(name string) Words {
	if w, ok := services[name]; ok {
		return w
	}
	if _, ok := builtinServices[name]; ok {
		return Words{"", "a campus service of the built-in catalogue"}
	}
	return Words{"", "a campus service this engine does not know; the app must provide it"}
}

var capabilities = map[string]Words{
	"network":        {"访问互联网上的公共网站", "reaches public websites"},
	"campus-network": {"访问只能在校园网内访问的网站", "reaches hosts only the PKU network can reach"},
	"campus-session": {"使用你的校园登录会话", "uses your campus login session"},
	"notifications":  {"向你发送通知", "sends you notifications"},
	"background":     {"在后台运行", "runs in the background"},
	"shell":          {"运行命令（手机上从不提供）", "runs commands (never available on phones)"},
	"filesystem":     {"读写文件", "reads and writes files"},
	"cloud":          {"使用 PKU harness Cloud", "uses a PKU harness Cloud provider"},
	"phone-control":  {"操作手机上的其他 App", "operates other apps on the phone"},
	"ongoing":        {"显示常驻通知", "shows an ongoing notification"},
	"location":       {"读取你的位置", "reads your location"},
	"calendar":       {"读写你的日历", "reads and writes your calendar"},
	"camera":         {"使用相机", "uses the camera"},
	"storage":        {"在本机存储数据", "stores data on the device"},
}

// CapabilityWords says what a required capability grants.
func CapabilityWords(name string) Words {
	if w, ok := capabilities[name]; ok {
		return w
	}
	return Words{"", "a capability this engine does not know"}
}

var abilities = map[string]Words{
	"kv":            {"插件自己的小型存储", "keeps a small private store"},
	"notifications": {"向你发送通知", "sends you notifications"},
	"calendar":      {"读写你的日历", "reads and writes your calendar"},
	"location":      {"读取你的位置", "reads your location"},
	"clipboard":     {"读写剪贴板", "reads and writes the clipboard"},
	"share":         {"打开分享面板", "opens the share sheet"},
	"open-url":      {"打开网页链接", "opens web links"},
}

// AbilityWords says what a host ability lets the document do.
func AbilityWords(name string) Words {
	if w, ok := abilities[name]; ok {
		return w
	}
	return Words{"", "an ability this engine does not know"}
}

var effects = map[manifest.Effect]Words{
	manifest.Read:   {"只读取信息", "only reads"},
	manifest.Write:  {"会修改你的数据", "changes your data"},
	manifest.Money:  {"会花钱", "spends money"},
	manifest.Public: {"会以你的名义公开发布", "posts publicly in your name"},
}

// EffectWords says what a tool's effect means.
func EffectWords(e manifest.Effect) Words {
	if w, ok := effects[e]; ok {
		return w
	}
	return Words{"", "has an unknown effect"}
}

var flags = map[string]Words{
	"untrusted": {"结果不可信（可能含他人写的内容）", "results are untrusted: they may hold text others wrote"},
	"userOnly":  {"只有你本人能调用", "only you can run it: hidden from the assistant"},
	"alwaysAsk": {"每次运行前都会询问", "always asks before it runs"},
	"serial":    {"一次只运行一个", "runs one call at a time"},
}

// FlagWords says what a tool flag means.
func FlagWords(flag string) Words { return flags[flag] }

var trusts = map[string]Words{
	"official":  {"官方", "official: from the PKU harness repository"},
	"community": {"社区", "community: written by someone else, not checked by PKU harness"},
}

// TrustWords says what a trust level means.
func TrustWords(t string) Words {
	if w, ok := trusts[t]; ok {
		return w
	}
	return Words{"", t}
}
