package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
)

// addSteer puts into a session page's data what its steering forms need
// (steer.html): whether it may steer, the CSRF token, and the question
// that waits, if any.
func (s *Server) addSteer(data map[string]any, ref sessionRef) {
	data["CSRF"] = csrfFor(s.o.Token)
	data["Steer"] = !s.o.ReadOnly && ref.Live
	if st, err := memory.LoadSessionState(s.o.Fs, ref.Project, ref.ID); err == nil && st.Question != nil && ref.Live {
		q := *st.Question
		q.Text = text.StripControls(q.Text)
		data["Waiting"] = &q
	}
}

// steer sends a POSTed stop, pause, continue, say or answer to the ralph
// running in the session's project, through the control socket ralph
// stop, pause, continue, say and answer use: whichever answer reaches it
// first wins. A form gets the page back with the reply; a script
// (Accept: application/json) the reply object.
func (s *Server) steer(w http.ResponseWriter, r *http.Request) {
	if s.o.ReadOnly {
		http.Error(w, "this server is read-only (ralph serve --read-only)", http.StatusForbidden)
		return
	}
	ref, ok := s.find(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	var req control.Request
	switch op := r.PathValue("op"); op {
	case control.OpStop, control.OpPause, control.OpContinue:
		req = control.Request{Op: op}
	case control.OpSay:
		// "!urgent" before the words is the urgent flag, as typed at
		// ralph's prompt.
		msg, urgent := strings.CutPrefix(strings.TrimSpace(r.PostFormValue("text")), "!urgent")
		req = control.Request{Op: op, Text: strings.TrimSpace(msg), Urgent: urgent || r.PostFormValue("urgent") != ""}
	case control.OpAnswer:
		id, _ := strconv.Atoi(r.PostFormValue("id"))
		req = control.Request{Op: op, Text: r.PostFormValue("answer"), QuestionID: id}
	default:
		http.NotFound(w, r)
		return
	}
	// The socket is the project's: a page of an older session must not
	// steer the run that works there now.
	reply := control.NotDone("session %s is not running; nothing was sent", ref.ID)
	if ref.Live {
		var err error
		if reply, err = control.Call(r.Context(), ref.Project, req); err != nil {
			reply = control.NotDone("not delivered: %s", err.Error())
		}
	}
	if r.Header.Get("Accept") == "application/json" {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(reply)
		return
	}
	http.Redirect(w, r, "/s/"+ref.Key+"/"+ref.ID+"?reply="+url.QueryEscape(reply.Text), http.StatusSeeOther)
}
