package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/ralph-dev/ralph"

// layer is how high a package of ralph stands: dependencies point down
// (faces → coordinator → workers → memory), interrupts may be used by
// all, and main only wires. -1 is a package outside the layering (the
// developers' commands in cmd/, these tests).
func layer(pkg string) int {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	top, _, _ := strings.Cut(rel, "/")
	switch top {
	case "":
		return 5 // main
	case "scripts", "repl":
		return 4
	case "coordinator", "ralph-temporal":
		return 3
	case "workers":
		return 2
	case "memory":
		return 1
	case "interrupts":
		return 0
	}
	return -1
}

// imports lists, for each package of the module in dir, the module's
// packages it imports.
func imports(t *testing.T, dir string) map[string][]string {
	t.Helper()
	list := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	list.Dir = dir
	out, err := list.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, module) {
				m[f[0]] = append(m[f[0]], imp)
			}
		}
	}
	if len(m) < 2 {
		t.Fatalf("go list in %s found almost no imports of ralph's packages:\n%s", dir, out)
	}
	return m
}

// TestPackagesPointDown keeps the floor plan of docs/architecture.md:
// no package imports one above it, nothing but main imports the chat
// shell, nothing below the faces imports scripts, and ralph-temporal (a
// module of its own, the task loop on Temporal) imports no face; the
// agent (coordinator and its helpers) never imports the task loop, and
// the packages the project wires (wiredByProject: the session's git, its
// hooks, …) never import the project.
func TestPackagesPointDown(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{moduleRoot, filepath.Join(moduleRoot, "ralph-temporal")} {
		for pkg, imps := range imports(t, dir) {
			from := layer(pkg)
			if from < 0 {
				continue
			}
			for _, imp := range imps {
				to := layer(imp)
				switch {
				case imp == module+"/repl" && pkg != module:
					t.Errorf("%s imports the chat shell; only main may", pkg)
				case strings.HasPrefix(imp, module+"/scripts") && from < 4:
					t.Errorf("%s, below the faces, imports %s", pkg, imp)
				case strings.HasPrefix(pkg, module+"/ralph-temporal") && to == 4:
					t.Errorf("ralph-temporal's %s imports the face %s", pkg, imp)
				case to > from:
					t.Errorf("%s (layer %d) imports %s (layer %d): dependencies point down", pkg, from, imp, to)
				case wiredByProject[strings.TrimPrefix(pkg, module+"/")] != "" && imp == module+"/coordinator/project":
					// The session's git, its hooks and the rest are wired
					// by the project, not the other way round: they stand
					// beside undo and task git, which use them.
					t.Errorf("%s imports %s; the project wires %s, which never reaches back into it", pkg, imp, wiredByProject[strings.TrimPrefix(pkg, module+"/")])
				case pkg == module+"/coordinator/event" && (strings.HasPrefix(imp, module+"/coordinator") || to == 2):
					// The events stand below the agent, the model client
					// and the tools, so the loop machine can emit them
					// without pulling those in (TestTheMachineStandsAlone).
					t.Errorf("%s imports %s; the events import nothing of the agent or the tools, which the loop machine must not need", pkg, imp)
				case agentPackage(pkg) && strings.HasPrefix(imp, module+"/coordinator/loop"):
					// The task loop stands on the agent's public API, as
					// ralph-temporal's workflow does; the bring-up and the
					// control socket, above both, join them.
					t.Errorf("%s imports the task loop %s; the loop uses the agent, not the other way round", pkg, imp)
				}
			}
		}
	}
}

// wiredByProject are the packages moved out of coordinator/project, each
// with what it holds: the project opens a session and wires them, and
// none of them imports it.
var wiredByProject = map[string]string{
	"coordinator/checkpoint":   "the session's git",
	"coordinator/instructions": "the instructions files a session reads",
	"coordinator/projectroot":  "where a project lies",
	"coordinator/takeover":     "the lock and the recovery after a crash",
	"coordinator/sessionhooks": "the session's hooks",
}

// TestTheMachineStandsAlone: the task loop's pure machine, and the event
// package it emits, depend on no part of the agent, its model client or
// the tools, directly or through another package (go list -deps), so a
// host carries its effects without either coming along. The events once
// lived in the coordinator itself, which pulled the model client and the
// tools into the machine (issue 93).
func TestTheMachineStandsAlone(t *testing.T) {
	t.Parallel()
	for _, pkg := range []string{module + "/coordinator/loop/machine", module + "/coordinator/event"} {
		list := exec.Command("go", "list", "-deps", pkg)
		list.Dir = moduleRoot
		out, err := list.CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		// Finding no memory means the listing went wrong, not that the
		// machine is pure.
		if !slices.Contains(deps, module+"/memory") {
			t.Fatalf("go list -deps %s found no %s/memory:\n%s", pkg, module, out)
		}
		for _, d := range agentDeps(deps) {
			t.Errorf("%s depends on %s: the machine and its events must stand without the agent, the model client and the tools", pkg, d)
		}
	}
}

// TestAgentDepsSeesAPlantedImport: the check above finds the agent, the
// model client and a tool among a package's dependencies, and nothing
// else.
func TestAgentDepsSeesAPlantedImport(t *testing.T) {
	t.Parallel()
	planted := []string{"fmt", module + "/memory", module + "/coordinator/event", module + "/coordinator/loop/decide",
		module + "/coordinator", module + "/coordinator/llm", module + "/workers/tools", module + "/workers"}
	if got, want := agentDeps(planted), planted[4:]; !slices.Equal(got, want) {
		t.Errorf("agentDeps found %q, want %q", got, want)
	}
}

// agentDeps are the packages among deps that the loop machine may not
// stand on: the coordinator itself, its model client and the tools
// (workers and everything under it).
func agentDeps(deps []string) []string {
	var out []string
	for _, d := range deps {
		rel, ok := strings.CutPrefix(d, module+"/")
		if !ok {
			continue
		}
		top, _, _ := strings.Cut(rel, "/")
		if rel == "coordinator" || rel == "coordinator/llm" || strings.HasPrefix(rel, "coordinator/llm/") || top == "workers" {
			out = append(out, d)
		}
	}
	return out
}

// agentPackage reports whether pkg is the agent or one of the helpers it
// is built from, which the task loop uses and so may not use.
func agentPackage(pkg string) bool {
	switch strings.TrimPrefix(pkg, module+"/") {
	case "coordinator", "coordinator/pubsub", "coordinator/remote":
		return true
	}
	return strings.HasPrefix(pkg, module+"/coordinator/llm")
}

// architecturePath is a backticked path of the repository in
// docs/architecture.md: a directory and a file of Go, markdown, JSON or
// TOML (`workers/tools/tools.go`), not a pattern (`<tool>.md`, `*.md`),
// a home (`~/.claude`) or a dotted directory of a project
// (`.ralph/engine.json`).
var architecturePath = regexp.MustCompile("`([a-z][A-Za-z0-9_-]*(?:/[A-Za-z0-9_.-]+)*/[A-Za-z0-9_.-]+\\.(?:go|md|json|toml))`")

// TestDocArchitecturePathsExist keeps docs/architecture.md's map, and its
// "Where do I change X" table above all, true as files move: every path
// of the repository it names in backticks exists, and every folder it
// names is a folder (checkDocFolders, docmap_test.go).
func TestDocArchitecturePathsExist(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join(moduleRoot, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, m := range architecturePath.FindAllStringSubmatch(string(doc), -1) {
		seen++
		if _, err := os.Stat(filepath.Join(moduleRoot, filepath.FromSlash(m[1]))); err != nil {
			t.Errorf("docs/architecture.md names %s, which does not exist: %v", m[1], err)
		}
	}
	// The table alone names more than forty paths: finding few means the
	// pattern stopped matching, not that the page is right.
	if seen < 40 {
		t.Fatalf("found only %d paths in docs/architecture.md; is the pattern still right?", seen)
	}
	checkDocFolders(t, string(doc))
}
