package project

import (
	"fmt"

	"github.com/ralph-dev/ralph/coordinator/projectroot"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// EffectiveConfig is the configuration a session opened in dir would run
// with (files, environment, then the flags' overrides), resolved as Open
// resolves it but without the lock, a session or a check of the result:
// for `ralph doctor` and `ralph config`, which report it.
func EffectiveConfig(dir string, o Overrides) (root string, cfg config.Config, err error) {
	root, err = projectroot.Root(dir, o.AllowHome)
	if err != nil {
		return "", cfg, err // one sentence that matches config.ErrInvalid
	}
	cfg, err = LoadConfig(root, nil)
	if err != nil {
		return root, cfg, err
	}
	return root, cfg, o.apply(&cfg)
}

// LoadConfig reads the config of the project at root from its files and
// the environment (getenv; nil is the process's): the project's file
// through the project's door, the person's own through theirs.
func LoadConfig(root string, getenv func(string) string) (config.Config, error) {
	door, err := rootfs.New(root)
	if err != nil {
		return config.Config{}, fmt.Errorf("%w: %w", config.ErrInvalid, err)
	}
	return config.Load(config.Sources{Fs: door, UserFs: rootfs.Person(), ProjectRoot: root, UserConfigDir: config.UserConfigDir(), Getenv: getenv})
}
