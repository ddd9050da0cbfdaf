package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/approval"
)

// choice is one button of a waiting question: the answer it sends (as
// typed at the terminal or given to ralph answer), the words it is
// labelled with, and whether it takes the person's words after it ("t:
// use make instead", "r: split task 3"). A page shows words, not the keys
// a terminal takes ([y]es), which mean nothing to a button.
type choice struct {
	Answer, Word string
	Words        bool
}

// choiceWords label the answers a question's kind takes (the answers
// themselves, and what they mean, are the asker's: the approval policy's,
// the plan's); an answer not here is shown as it is. An approval's
// buttons are named where its question's Plain text names them.
var choiceWords = map[string]map[string]choice{
	"approval": {
		"y":       {Word: approval.ButtonYes},
		"n":       {Word: approval.ButtonNo},
		"t":       {Word: approval.ButtonTell, Words: true},
		"always":  {Word: approval.ButtonAlways},
		"project": {Word: approval.ButtonProject},
	},
	"confirm": {"y": {Word: "Yes"}, "n": {Word: "No"}},
	"plan": {
		"a": {Word: "Accept"},
		"r": {Word: "Revise", Words: true},
		"d": {Word: "Drop"},
	},
}

// choices are q's buttons, in the order the asker offers them.
func choices(q memory.Question) []choice {
	var out []choice
	for _, a := range q.Answers {
		c, ok := choiceWords[q.Kind][a]
		if !ok {
			c = choice{Word: a}
		}
		c.Answer = a
		out = append(out, c)
	}
	return out
}

// addSteer puts into a session page's data what its steering forms need
// (steer.html): whether it may steer, the CSRF token, and the question
// that waits, if any, with its buttons.
func (s *Server) addSteer(data map[string]any, ref sessionRef) {
	data["CSRF"] = csrfFor(s.o.Token)
	data["Steer"] = !s.o.ReadOnly && ref.Live
	if st, err := memory.LoadSessionState(s.o.Fs, ref.Project, ref.ID); err == nil && st.Question != nil && ref.Live {
		q := *st.Question
		// A page shows the question without the terminal's keys where
		// the asker wrote it so (Plain), and what "?" explains there as
		// text of its own.
		if q.Plain != "" {
			q.Text = q.Plain
		}
		q.Text = text.StripControls(q.Text)
		q.Details = text.StripControls(q.Details)
		data["Waiting"] = &q
		data["Choices"] = choices(q)
	}
}

// steerPart is the steering part of a session page alone (steer.html),
// which steer.js fetches again when a question comes or is answered, so
// the page shows what waits without a reload or a timer.
func (s *Server) steerPart(w http.ResponseWriter, r *http.Request) {
	ref, ok := s.find(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	data := map[string]any{"S": ref}
	s.addSteer(data, ref)
	s.render(w, "steer", data)
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
	case remote.OpStop:
		// The run says the stop came from here, not from a terminal.
		req = control.Request{Op: op, From: control.FromWeb}
	case remote.OpPause, remote.OpContinue:
		req = control.Request{Op: op}
	case remote.OpSay:
		// "!urgent" before the words is the urgent flag, as typed at
		// ralph's prompt.
		msg, urgent := strings.CutPrefix(strings.TrimSpace(r.PostFormValue("text")), "!urgent")
		req = control.Request{Op: op, Text: strings.TrimSpace(msg), Urgent: urgent || r.PostFormValue("urgent") != ""}
	case remote.OpAnswer:
		id, _ := strconv.Atoi(r.PostFormValue("id"))
		req = control.Request{Op: op, Text: formAnswer(r), QuestionID: id, From: control.FromWeb}
	default:
		http.NotFound(w, r)
		return
	}
	// The request goes to the ralph recording this session: a page of an
	// older session must not steer the run that works there now, nor a
	// run's page a chat open beside it.
	reply := control.NotDone("session %s is not running; nothing was sent", ref.ID)
	if ref.Live {
		var err error
		if reply, err = s.call(r.Context(), ref, req); err != nil {
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

// call sends req to the ralph recording ref's session, trying again while
// the session is live but no ralph of it serves the socket yet (up to
// socketWait): the page offers its buttons as soon as the session is
// recorded, and a stop pressed then was lost.
func (s *Server) call(ctx context.Context, ref sessionRef, req control.Request) (control.Reply, error) {
	deadline := time.Now().Add(socketWait)
	for {
		reply, err := control.Call(ctx, control.Where{Root: ref.Project, Session: ref.ID}, req)
		if !errors.Is(err, control.ErrNotRunning) || time.Now().After(deadline) || !running(s.o.Fs, ref.Project, ref.ID) {
			return reply, err
		}
		select {
		case <-ctx.Done():
			return reply, err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// formAnswer is the answer a question's form sends: its button's answer,
// with the words of the field beside a button that takes them, as
// ralph answer takes them ("t: use make instead"). The asker's parser
// reads it, so a page cannot answer what the terminal could not.
func formAnswer(r *http.Request) string {
	answer := strings.TrimSpace(r.PostFormValue("answer"))
	words := strings.Join(strings.Fields(r.PostFormValue("words")), " ")
	if words == "" || r.PostFormValue("takes_words") != answer {
		return answer
	}
	return answer + ": " + words
}
