package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/site/web"
)

func TestLocalPath(t *testing.T) {
	for in, want := range map[string]string{
		"/cart": "/cart", "": "/", "//evil.example/x": "/", `/\evil`: "/", `/./\evil.example`: "/", `/a/..\\x`: "/", "https://x": "/", "/a\nb": "/", "/orders?x=1": "/orders?x=1",
	} {
		if got := web.LocalPath(in); got != want {
			t.Errorf("LocalPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSessionsLoginRotatesAndCSRF(t *testing.T) {
	s := web.NewSessions("sid")
	rec := httptest.NewRecorder()
	anon := s.Ensure(rec, httptest.NewRequest("GET", "/", nil))
	cookie := rec.Result().Cookies()[0]
	if !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode || cookie.Path != "/" {
		t.Errorf("cookie = %+v", cookie)
	}
	post := func(c *http.Cookie, csrf string) *http.Request {
		r := httptest.NewRequest("POST", "/x", strings.NewReader(url.Values{web.CSRFField: {csrf}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.AddCookie(c)
		return r
	}
	if _, err := s.CheckCSRF(post(cookie, anon.CSRF)); err != nil {
		t.Errorf("good token: %v", err)
	}
	if _, err := s.CheckCSRF(post(cookie, "x"+anon.CSRF)); err == nil {
		t.Error("bad token accepted")
	}
	rec = httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/", nil)
	r.AddCookie(cookie)
	user := s.Login(rec, r, "alex")
	if user.Token == anon.Token || user.CSRF == anon.CSRF {
		t.Error("login kept the visitor's tokens")
	}
	if _, ok := s.Get(r); ok {
		t.Error("the pre-login session still exists")
	}
	if other := web.NewSessions("sid"); func() bool { _, ok := other.Get(r); return ok }() {
		t.Error("two stores share sessions")
	}
}
