package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestFallbackModelsLoad(t *testing.T) {
	c, err := load(t, map[string]string{
		userFile: "fallback_models = [\"gpt-4o\", \"gemini:gemini-2.5-pro\"]\nfallback_on_limit = true\n",
	}, env{})
	if err != nil {
		t.Fatal(err)
	}
	want := []FallbackModel{{Name: "gpt-4o"}, {Name: "gemini:gemini-2.5-pro"}}
	if !reflect.DeepEqual(c.FallbackModels, want) || !c.FallbackOnLimit {
		t.Errorf("fallback = %+v", c.Fallback)
	}
	// A project's list replaces the person's and is marked as the
	// project's: it may only name the session's own provider's models.
	c, err = load(t, map[string]string{
		userFile:    "fallback_models = [\"gpt-4o\"]\n",
		projectFile: "fallback_models = [\"gpt-4.1-mini\"]\n",
	}, env{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []FallbackModel{{Name: "gpt-4.1-mini", Project: true}}; !reflect.DeepEqual(c.FallbackModels, want) {
		t.Errorf("fallback models = %+v", c.FallbackModels)
	}
	// A flag replaces both.
	c.SetFallbackModels([]string{"a", "b"})
	if got := c.FallbackNames(); !reflect.DeepEqual(got, []string{"a", "b"}) || c.FallbackModels[0].Project {
		t.Errorf("after the flag: %+v", c.FallbackModels)
	}
}

func TestFallbackModelsRefused(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"four models":                {userFile: `fallback_models = ["a", "b", "c", "d"]`},
		"an empty name":              {userFile: `fallback_models = ["a", ""]`},
		"fallback_on_limit, project": {projectFile: `fallback_on_limit = true`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := load(t, files, env{})
			if !errors.Is(err, ErrInvalid) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want one sentence of an invalid configuration", err)
			}
		})
	}
	f := Fallback{}
	f.SetFallbackModels([]string{"a", "b", "c", "d"})
	if err := f.CheckFallbackModels(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "at most 3") {
		t.Errorf("four flags: %v", err)
	}
}
