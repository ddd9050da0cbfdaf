package project

import (
	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/config"
)

// EffectiveConfig is the configuration a session opened in dir would run
// with (files, environment, then the flags' overrides), resolved as Open
// resolves it but without the lock, a session or a check of the result:
// for `ralph doctor` and `ralph config`, which report it.
func EffectiveConfig(dir string, o Overrides) (root string, cfg config.Config, err error) {
	root, err = Root(dir)
	if err != nil {
		return "", cfg, err // one sentence that matches config.ErrInvalid
	}
	cfg, err = config.Load(config.Sources{Fs: afero.NewOsFs(), ProjectRoot: root, UserConfigDir: config.UserConfigDir(), Getenv: nil})
	if err != nil {
		return root, cfg, err
	}
	applyOverrides(&cfg, o)
	return root, cfg, nil
}
