package web

import (
	"crypto/rand"
	"crypto/subtle"
	"net/http"
	"sync"
)

// Session is a copy of one visitor's session.
type Session struct {
	Token string
	// CSRF is the token every POST form of this session must send.
	CSRF string
	// User is the logged-in username, empty for a visitor.
	User string
}

// CSRFField is the form field that carries the CSRF token.
const CSRFField = "csrf_token"

// DefaultMaxSessions bounds a Sessions store; the oldest session goes first.
const DefaultMaxSessions = 10000

// Sessions is an in-memory session store of one site instance. It is safe
// for concurrent use; two stores never share sessions.
type Sessions struct {
	cookie string
	max    int

	mu    sync.Mutex
	m     map[string]*entry
	order []string // insertion order, for eviction
}

type entry struct {
	s     Session
	flash string
}

// NewSessions returns an empty store whose cookie is named cookie.
func NewSessions(cookie string) *Sessions {
	return &Sessions{cookie: cookie, max: DefaultMaxSessions, m: make(map[string]*entry)}
}

// Get returns the session of the request's cookie.
func (s *Sessions) Get(r *http.Request) (Session, bool) {
	c, err := r.Cookie(s.cookie)
	if err != nil {
		return Session{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[c.Value]
	if !ok {
		return Session{}, false
	}
	return e.s, true
}

// Ensure returns the request's session, starting a visitor session (and
// setting its cookie on w) if there is none.
func (s *Sessions) Ensure(w http.ResponseWriter, r *http.Request) Session {
	if ss, ok := s.Get(r); ok {
		return ss
	}
	return s.start(w, "")
}

// Login replaces the request's session with a new one for user, so a token
// known before the login is worthless after it.
func (s *Sessions) Login(w http.ResponseWriter, r *http.Request, user string) Session {
	s.drop(r)
	return s.start(w, user)
}

// Logout ends the request's session and clears the cookie.
func (s *Sessions) Logout(w http.ResponseWriter, r *http.Request) {
	s.drop(r)
	http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

// CheckCSRF returns the request's session if the POSTed csrf_token matches
// it, else a 403 *Error. It parses the form (a body over the limit is 413).
func (s *Sessions) CheckCSRF(r *http.Request) (Session, error) {
	if err := r.ParseForm(); err != nil {
		e := AsError(err)
		if e.Status == http.StatusInternalServerError {
			e = &Error{Status: http.StatusBadRequest, Msg: "the form could not be read", Err: err}
		}
		return Session{}, e
	}
	ss, ok := s.Get(r)
	got := r.PostForm.Get(CSRFField)
	if !ok || got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(ss.CSRF)) != 1 {
		return Session{}, Errorf(http.StatusForbidden, "the form has expired or did not come from this site: reload the page and try again")
	}
	return ss, nil
}

// SetFlash stores a one-time message for the session's next page.
func (s *Sessions) SetFlash(token, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[token]; ok {
		e.flash = msg
	}
}

// TakeFlash returns and clears the session's one-time message.
func (s *Sessions) TakeFlash(token string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[token]
	if !ok {
		return ""
	}
	msg := e.flash
	e.flash = ""
	return msg
}

func (s *Sessions) start(w http.ResponseWriter, user string) Session {
	ss := Session{Token: rand.Text(), CSRF: rand.Text(), User: user}
	s.mu.Lock()
	for len(s.m) >= s.max && len(s.order) > 0 {
		delete(s.m, s.order[0])
		s.order = s.order[1:]
	}
	s.m[ss.Token] = &entry{s: ss}
	s.order = append(s.order, ss.Token)
	if len(s.order) > 2*s.max { // drop tokens of ended sessions
		live := s.order[:0]
		for _, t := range s.order {
			if _, ok := s.m[t]; ok {
				live = append(live, t)
			}
		}
		s.order = live
	}
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: ss.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	return ss
}

func (s *Sessions) drop(r *http.Request) {
	c, err := r.Cookie(s.cookie)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, c.Value)
	// order keeps the stale token; eviction of a missing key is a no-op.
}

// Clear ends every session (an instance reset: nobody stays logged in).
func (s *Sessions) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m = make(map[string]*entry)
	s.order = nil
}
