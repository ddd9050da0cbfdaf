package planfile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ralph-dev/ralph/memory"
)

// importPRD merges doc's stories into f, one task per story, counting and
// warning in res. It is split in two passes: every story's task id is
// chosen first (storyTaskIDs), since a story may depend on one that comes
// after it, and then each story is added or updated (prdImport.story).
func (f *TaskFile) importPRD(doc *prdDoc, res *ImportResult) error {
	stories := *doc.UserStories
	ids, first := storyTaskIDs(stories, res)

	// The tasks the file had before the import. Tasks added below need not
	// be in it, since their ids are unique among the stories, and Add puts
	// each after every existing task, so these indexes normally stay valid.
	im := &prdImport{f: f, doc: doc, res: res, first: first, existing: f.idIndex(), headerDone: len(f.tasks) > 0}
	for i, s := range stories {
		if err := im.story(i, s, ids[i]); err != nil {
			return err
		}
	}
	return nil
}

// warn adds a warning about the prd.json to the result.
func (res *ImportResult) warn(format string, a ...any) {
	res.Warnings = append(res.Warnings, fmt.Sprintf(format, a...))
}

// storyTaskIDs chooses the task id of each story, in order, and maps each
// story id as written to the task id of its first story, by which the
// stories' dependencies are resolved.
func storyTaskIDs(stories []prdStory, res *ImportResult) (ids []string, first map[string]string) {
	// Task ids come from the story ids alone, never from what the file
	// holds, so a second import finds the tasks the first one made.
	ids = make([]string, len(stories))
	first = map[string]string{} // story id as written -> task id
	firstAt := map[string]int{}
	used := map[string]bool{}
	for i, s := range stories {
		orig := strings.TrimSpace(s.id)
		id := sanitizeTaskID(orig)
		switch {
		case orig == "":
			id = "story-" + strconv.Itoa(i+1)
			res.warn("Story %d has no id; it is imported as %s.", i+1, id)
		case id == "":
			id = "story-" + strconv.Itoa(i+1)
			res.warn("Story %d has id %q, which has no letters or digits; it is imported as %s.", i+1, orig, id)
		}
		if used[id] {
			base := id
			for n := 2; used[id]; n++ {
				id = base + "-" + strconv.Itoa(n)
			}
			if j, dup := firstAt[orig]; dup {
				res.warn("Stories %d and %d both have id %q; the second is imported as %s.", j+1, i+1, orig, id)
			}
		}
		used[id], ids[i] = true, id
		if _, seen := first[orig]; !seen && orig != "" {
			first[orig], firstAt[orig] = id, i
		}
	}
	return ids, first
}

// prdImport is the state importPRD's second pass shares between stories:
// the task ids chosen for the stories, the tasks the file had, and whether
// the file has its header yet.
type prdImport struct {
	f          *TaskFile
	doc        *prdDoc
	res        *ImportResult
	first      map[string]string // story id as written -> task id
	existing   map[string]int    // task id -> index in f.tasks
	headerDone bool
}

// story adds story s, the i-th, as task id, or updates that task if the
// file has it already, so that importing a file twice changes nothing.
func (im *prdImport) story(i int, s prdStory, id string) error {
	// Warnings name the story as prd.json does, and the task too when
	// its id differs, so a person can find both.
	name := strings.TrimSpace(s.id)
	switch {
	case name == "":
		name = fmt.Sprintf("%d (task %s)", i+1, id)
	case name != id:
		name = fmt.Sprintf("%q (task %s)", name, id)
	}
	meta := im.storyMeta(s, id, name)
	if k, ok := im.existing[id]; ok {
		return im.update(k, s, id, meta)
	}
	return im.add(s, id, name, meta)
}

// storyMeta is the metadata of story s's task: its id, its priority and
// the tasks it depends on, warning about what cannot be kept as written.
func (im *prdImport) storyMeta(s prdStory, id, name string) map[string]string {
	meta := map[string]string{"id": id}
	if p, ok := prdPriority(s.Priority); ok {
		meta["priority"] = strconv.Itoa(p)
	} else if len(s.Priority) > 0 && string(s.Priority) != "null" {
		im.res.warn("Story %s has priority %s, which is not a whole number; it is imported without one.", name, s.Priority)
	}
	if deps := im.storyDeps(s, id, name); len(deps) > 0 {
		meta["depends"] = strings.Join(deps, ",")
	}
	return meta
}

// storyDeps is the task ids story s depends on, once each: a story of
// this file by its task id, else the id as a task's; a dependency on
// nothing known is kept (the task waits for it) but warned about.
func (im *prdImport) storyDeps(s prdStory, id, name string) []string {
	var deps []string
	for _, d := range s.deps {
		ds := strings.TrimSpace(d)
		if ds == "" {
			continue
		}
		dep, known := im.first[ds]
		if !known {
			dep = sanitizeTaskID(ds)
			if _, ok := im.existing[dep]; !ok || dep == "" {
				im.res.warn("Story %s depends on %q, which is neither a story in this file nor a task in %s; "+
					"its task waits until a task with that id exists.", name, ds, memory.TasksFile)
			}
		}
		switch {
		case dep == "":
		case dep == id:
			im.res.warn("Story %s depends on itself; that dependency is left out.", name)
		case !slices.Contains(deps, dep):
			deps = append(deps, dep)
		}
	}
	return deps
}

// update brings task id, at index k of the file before the import, in
// line with story s, and counts it as updated or unchanged.
func (im *prdImport) update(k int, s prdStory, id string, meta map[string]string) error {
	if im.f.tasks[k].id() != id {
		// Only if an insertion re-read the file differently; look
		// the task up again rather than edit the wrong one.
		im.existing = im.f.idIndex()
		k = im.existing[id]
	}
	changed, err := im.f.updateFromStory(k, s.Passes, meta)
	if err != nil {
		return err
	}
	if changed {
		im.res.Updated++
	} else {
		im.res.Unchanged++
	}
	return nil
}

// add adds story s as a new task id, with the file's header before the
// first task and the story's text under its task.
func (im *prdImport) add(s prdStory, id, name string, meta map[string]string) error {
	title := strings.Join(strings.Fields(s.Title), " ")
	switch {
	case title == "":
		// The description's first line is the next best thing to tell
		// the model and a person what the task is about.
		title = id
		if d := textLines(s.Description); len(d) > 0 {
			title += ": " + d[0]
			im.res.warn("Story %s has no title; its task is titled by its description.", name)
		} else {
			im.res.warn("Story %s has no title; its task is titled by its id.", name)
		}
	case !im.doc.plain && !startsWithWord(title, id):
		title = id + ": " + title
	}
	if !im.headerDone {
		if err := im.f.insertHeader(im.doc); err != nil {
			return err
		}
		im.headerDone = true
	}
	t := im.f.Add(title, meta)
	if t.ID != id {
		return fmt.Errorf("internal error: story %s was added without its id", name)
	}
	if s.Passes {
		if err := im.f.SetState(id, TaskDone); err != nil {
			return err
		}
	}
	notes := s.Notes
	if strings.TrimSpace(notes) == "" {
		notes = s.CompletionNotes
	}
	if err := im.f.insertBody(t.Line-1, storyBody(s.Description, s.AcceptanceCriteria, notes)); err != nil {
		return err
	}
	im.res.Added++
	return nil
}
