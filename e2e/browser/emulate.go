package browser

import (
	"context"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// Emulate shows the page as another screen would: a viewport of width by
// height CSS pixels (mobile: a phone's, which honours the page's viewport
// meta tag and lays text out as a phone does) and a preferred colour
// scheme ("light" or "dark"; "" leaves the browser's). It lasts for the
// tab's life, reloads included.
func (p *Page) Emulate(width, height int, mobile bool, scheme string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, CallTimeout)
	defer cancel()
	if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: int64(width), Height: int64(height), DeviceScaleFactor: 1, Mobile: mobile}); err != nil {
		p.t.Fatalf("emulate a %dx%d screen: %v", width, height, err)
	}
	var features []*emulation.MediaFeature
	if scheme != "" {
		features = []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}
	}
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: features}); err != nil {
		p.t.Fatalf("emulate prefers-color-scheme %q: %v", scheme, err)
	}
}
