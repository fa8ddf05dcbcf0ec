package proxy

import "strings"

// builtinQueryPaths are the campus endpoints that answer a query sent by
// POST (../shared/campus): a tool that POSTs there still only reads. Each
// entry is an exact path, or a folder ending in "/" whose every path is a
// query.
var builtinQueryPaths = map[string][]string{
	// §6: the notice lists and details (retrAllSchoolNotice.do,
	// retrAllDeptNotice.do, getSchoolNoticeDetailById.do,
	// getDeptNoticeDetailById.do) are form POSTs; §2: the older free
	// classroom query takes a POST form.
	"portal": {"/portal2017/notice/", "/portal2017/publicsearch/classroom/retrClassRoomFree.do"},
	// §10: the course catalogue search.
	"dean": {"/service/web/courseSearch_do.php"},
	// §1b: transactions and the card's balance.
	"card-legacy": {"/Report/GetPersonTrjn", "/User/GetCardInfoByAccountNoParm"},
	// §2: the rooms of a building.
	"bdkj": {"/room/classRoom"},
	// §4B, §5: class times and the user's own record.
	"treehole": {"/chapi/api/v3/classtimes/user_class_times", "/chapi/api/v3/users/info"},
}

// IsQueryPath reports whether a request to path on this service is a
// query by the catalogue: path is one of QueryPaths, or lies in a folder
// of QueryPaths. When literal is false, path is only the literal start of
// a path template: it matches when it already lies in such a folder (what
// a template adds stays inside: the proxy refuses dot segments and encoded
// slashes). The comparison is on the text as written; a path written
// another way (escaped) is no query.
func (s *Service) IsQueryPath(path string, literal bool) bool {
	if s == nil || !strings.HasPrefix(path, "/") {
		return false
	}
	for _, q := range s.QueryPaths {
		if strings.HasSuffix(q, "/") {
			if strings.HasPrefix(path, q) {
				return true
			}
		} else if literal && path == q {
			return true
		}
	}
	return false
}

// IsQueryPath reports whether service's path is a query endpoint in c (see
// Service.IsQueryPath); an unknown service has none.
func (c Catalogue) IsQueryPath(service, path string, literal bool) bool {
	return c[service].IsQueryPath(path, literal)
}
