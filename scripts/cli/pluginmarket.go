package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/memory/plugins"
	"github.com/ralph-dev/ralph/memory/text"
)

// marketErr turns what the marketplaces refuse into one sentence and
// exit 2; a record that cannot be read stays an error of its own.
func (p PluginCommands) marketErr(err error) error {
	if errors.Is(err, plugins.ErrCorrupt) || errors.Is(err, plugins.ErrNoConfigDir) {
		return err
	}
	msg := err.Error()
	// The sentences begin with their sentinel's words, which say less.
	for _, s := range []error{plugins.ErrUnsupported, plugins.ErrNoMarket, plugins.ErrNoEntry, plugins.ErrAmbiguous, plugins.ErrNameTaken, plugins.ErrManifest, plugins.ErrModelMarket} {
		msg = strings.TrimPrefix(msg, s.Error()+": ")
	}
	switch {
	case errors.Is(err, plugins.ErrLinkOut):
		msg = "refused: " + msg + ", which ralph does not follow"
	case errors.Is(err, plugins.ErrNotPlugin):
		msg = "the plugin is refused: " + strings.TrimPrefix(msg, plugins.ErrNotPlugin.Error()+": ")
	}
	return fmt.Errorf("%w: %s", ErrPluginUsage, text.OneLine(text.StripControls(msg)))
}

// MarketAdd adds the marketplace arg names.
func (p PluginCommands) MarketAdd(arg string) error {
	cwd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("finding the working directory: %w", err)
	}
	if strings.HasPrefix(arg, "~"+string(filepath.Separator)) && p.Home != "" {
		arg = filepath.Join(p.Home, arg[2:])
	}
	rec, m, err := p.adder().AddMarket(context.Background(), arg, cwd)
	if errors.Is(err, fs.ErrNotExist) && !errors.Is(err, plugins.ErrNotMarket) {
		return fmt.Errorf("%w: %s", ErrPluginUsage, text.OneLine(text.StripControls(arg+" is neither a directory here, a git URL nor a GitHub owner/repo")))
	}
	if err != nil {
		return p.marketErr(err)
	}
	if p.JSON {
		return writeJSON(p.Out, map[string]any{"name": rec.Name, "source": rec.Source, "url": rec.URL, "dir": rec.Dir, "plugins": len(m.Plugins)})
	}
	how := "read where it lies"
	if rec.URL != "" {
		how = "cloned into " + rec.Dir
	}
	fmt.Fprintf(p.Out, "Added marketplace %s from %s (%s): %s. Add one with ralph plugin add NAME@%s.\n",
		rec.Name, text.OneLine(text.StripControls(rec.Source)), text.OneLine(text.StripControls(how)), text.Counted(len(m.Plugins), "plugin", "plugins"), rec.Name)
	// A marketplace that is not the person's may not make ralph clone
	// (plugins.Whose): say so now, and which of its plugins that leaves out.
	if t := plugins.MarketTrust(rec, p.Store); !t.Persons {
		fmt.Fprintf(p.Out, "It is not yours, since it lies %s: its plugins' hooks need your approval, and ralph will not clone the sources it names", text.OneLine(text.StripControls(t.Where)))
		if remote := m.Remote(); len(remote) > 0 {
			fmt.Fprintf(p.Out, " (%s cannot be added from it)", text.OneLine(text.StripControls(strings.Join(remote, ", "))))
		}
		fmt.Fprintln(p.Out, ".")
	}
	return nil
}

// MarketList prints the marketplaces added.
func (p PluginCommands) MarketList() error {
	recs, err := plugins.Markets(p.Person, p.ConfigDir)
	if err != nil {
		return err
	}
	if p.JSON {
		return writeJSON(p.Out, map[string]any{"marketplaces": append([]plugins.MarketRecord{}, recs...)})
	}
	if len(recs) == 0 {
		fmt.Fprintln(p.Out, "No marketplaces added. Add one with ralph plugin marketplace add PATH|GIT-URL|OWNER/REPO.")
	}
	for _, r := range recs {
		fmt.Fprintf(p.Out, "%s  %s  %s\n", r.Name, text.OneLine(text.StripControls(r.Source)), text.OneLine(text.StripControls(r.Dir)))
	}
	return nil
}

// MarketRemove forgets the marketplace name and its plugins.
func (p PluginCommands) MarketRemove(name string) error {
	rec, gone, err := p.adder().RemoveMarket(name)
	if errors.Is(err, plugins.ErrNoMarket) {
		return fmt.Errorf("%w: no marketplace named %s is added (ralph plugin marketplace list shows them)", ErrPluginUsage, text.OneLine(text.StripControls(name)))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(p.Out, "Removed marketplace %s", rec.Name)
	if len(gone) > 0 {
		fmt.Fprintf(p.Out, " and its plugins %s", strings.Join(gone, ", "))
	}
	fmt.Fprintln(p.Out, ".")
	return nil
}

// Update reads the marketplaces and the plugins anew.
func (p PluginCommands) Update(name string) error {
	ups, err := p.adder().Update(context.Background(), name)
	if errors.Is(err, plugins.ErrNotFound) {
		return fmt.Errorf("%w: no plugin named %s is added (ralph plugin list shows them)", ErrPluginUsage, text.OneLine(text.StripControls(name)))
	}
	if err != nil {
		return err
	}
	if len(ups) == 0 {
		fmt.Fprintln(p.Out, "No plugins added; nothing to update.")
	}
	failed := 0
	for _, u := range ups {
		if u.Err != nil {
			failed++
			fmt.Fprintf(p.Out, "Plugin %s was not updated: %s\n", u.Name, text.OneLine(text.StripControls(strings.TrimPrefix(u.Err.Error(), plugins.ErrModelMarket.Error()+": "))))
			continue
		}
		change := "version " + orNone(u.Now)
		if u.Was != u.Now {
			change = "version " + orNone(u.Was) + " -> " + orNone(u.Now)
		}
		fmt.Fprintf(p.Out, "Updated plugin %s (%s).\n", u.Name, text.OneLine(text.StripControls(change)))
	}
	if failed > 0 {
		return fmt.Errorf("%s not updated", text.Counted(failed, "plugin was", "plugins were"))
	}
	return nil
}

func orNone(v string) string {
	if v == "" {
		return "none"
	}
	return v
}
