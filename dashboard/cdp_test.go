package dashboard

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// cdp drives headless Chromium over the DevTools protocol through --remote-debugging-pipe
// (messages as JSON, each ended by a NUL, on file descriptors 3 and 4): no websocket and no
// module beyond the standard library.
type cdp struct {
	t       *testing.T
	cmd     *exec.Cmd
	w       *os.File
	mu      sync.Mutex
	next    int
	waiting map[int]chan cdpReply
	session string
	// requests are the URLs the page asked for; failed the ones answered 400 or more.
	requests, failed []string
	// errors are the page's exceptions and console errors (a CSP violation among them).
	errors []string
	loads  int // Page.loadEventFired so far
}

type cdpReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func startCDP(t *testing.T, bin string) *cdp {
	t.Helper()
	toChrome, ourEnd, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	theirEnd, fromChrome, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// Not t.TempDir: Chromium's helper processes may still write there for a moment after it
	// exits, which TempDir's cleanup reports as a failure.
	profile, err := os.MkdirTemp("", "hyperflat-chromium-*")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		"--hide-scrollbars", "--user-data-dir="+profile, "--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{toChrome, fromChrome} // fds 3 and 4
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	toChrome.Close()
	fromChrome.Close()
	c := &cdp{t: t, cmd: cmd, w: ourEnd, waiting: map[int]chan cdpReply{}}
	t.Cleanup(func() {
		// Browser.close ends Chromium with its helpers; the kill is for one that hangs.
		msg, _ := json.Marshal(map[string]any{"id": 1 << 30, "method": "Browser.close", "params": map[string]any{}})
		ourEnd.Write(append(msg, 0))
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		ourEnd.Close()
		for range 20 {
			if os.RemoveAll(profile) == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	go c.read(bufio.NewReader(theirEnd))
	var target struct{ TargetID string }
	c.call("Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var att struct{ SessionID string }
	c.call("Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att)
	c.session = att.SessionID
	for _, m := range []string{"Page.enable", "Network.enable", "Runtime.enable", "Log.enable"} {
		c.call(m, nil, nil)
	}
	c.call("Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false}, nil)
	return c
}

func (c *cdp) read(r *bufio.Reader) {
	for {
		msg, err := r.ReadBytes(0)
		if err != nil {
			return
		}
		var m struct {
			ID     int             `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			cdpReply
		}
		if json.Unmarshal(msg[:len(msg)-1], &m) != nil {
			continue
		}
		c.mu.Lock()
		switch {
		case m.ID != 0:
			if ch := c.waiting[m.ID]; ch != nil {
				ch <- m.cdpReply
				delete(c.waiting, m.ID)
			}
		case m.Method == "Network.requestWillBeSent":
			var p struct{ Request struct{ URL string } }
			json.Unmarshal(m.Params, &p)
			c.requests = append(c.requests, p.Request.URL)
		case m.Method == "Network.responseReceived":
			var p struct {
				Response struct {
					URL    string
					Status int
				}
			}
			json.Unmarshal(m.Params, &p)
			if p.Response.Status >= 400 {
				c.failed = append(c.failed, fmt.Sprintf("%s: %d", p.Response.URL, p.Response.Status))
			}
		case m.Method == "Runtime.exceptionThrown":
			var p struct {
				ExceptionDetails struct {
					Text      string
					Exception struct{ Description string }
				}
			}
			json.Unmarshal(m.Params, &p)
			c.errors = append(c.errors, p.ExceptionDetails.Text+" "+p.ExceptionDetails.Exception.Description)
		case m.Method == "Log.entryAdded":
			var p struct {
				Entry struct{ Level, Source, Text, URL string }
			}
			json.Unmarshal(m.Params, &p)
			if p.Entry.Level == "error" {
				c.errors = append(c.errors, p.Entry.Source+": "+p.Entry.Text+" "+p.Entry.URL)
			}
		case m.Method == "Page.loadEventFired":
			c.loads++
		}
		c.mu.Unlock()
	}
}

// call sends a command to the page's session (the browser's for Target.*) and decodes its result.
func (c *cdp) call(method string, params any, out any) {
	c.t.Helper()
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan cdpReply, 1)
	c.waiting[id] = ch
	msg := map[string]any{"id": id, "method": method, "params": params}
	if params == nil {
		msg["params"] = map[string]any{}
	}
	if !strings.HasPrefix(method, "Target.") {
		msg["sessionId"] = c.session
	}
	b, _ := json.Marshal(msg)
	_, err := c.w.Write(append(b, 0))
	c.mu.Unlock()
	if err != nil {
		c.t.Fatalf("cdp %s: %v", method, err)
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			c.t.Fatalf("cdp %s: %s", method, r.Error.Message)
		}
		if out != nil {
			if err := json.Unmarshal(r.Result, out); err != nil {
				c.t.Fatalf("cdp %s: %v", method, err)
			}
		}
	case <-time.After(30 * time.Second):
		c.t.Fatalf("cdp %s: no answer in 30 s", method)
	}
}

// eval evaluates a JavaScript expression in the page (awaiting a promise) into out.
func (c *cdp) eval(expr string, out any) {
	c.t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	c.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r)
	if r.ExceptionDetails != nil {
		c.t.Fatalf("evaluating %s: %s %s", expr, r.ExceptionDetails.Text, r.ExceptionDetails.Exception.Description)
	}
	if out != nil {
		if err := json.Unmarshal(r.Result.Value, out); err != nil {
			c.t.Fatalf("evaluating %s: %v (%s)", expr, err, r.Result.Value)
		}
	}
}

// navigate opens url and waits for its load event.
func (c *cdp) navigate(url string) {
	c.t.Helper()
	c.mu.Lock()
	before := c.loads
	c.mu.Unlock()
	c.call("Page.navigate", map[string]any{"url": url}, nil)
	c.waitUntil(fmt.Sprintf("the load of %s", url), 20*time.Second, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.loads > before
	})
}

// waitUntil polls ok every 50 ms until it holds, failing the test after limit.
func (c *cdp) waitUntil(what string, limit time.Duration, ok func() bool) {
	c.t.Helper()
	end := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(end) {
			c.t.Fatalf("waited %v for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// truthy waits until a JavaScript expression is true.
func (c *cdp) truthy(what, expr string, limit time.Duration) {
	c.t.Helper()
	c.waitUntil(what, limit, func() bool {
		var ok bool
		c.eval("Boolean("+expr+")", &ok)
		return ok
	})
}

// hover moves the mouse to the centre of the element selected by css (a chart's tooltip).
func (c *cdp) hover(css string) {
	c.t.Helper()
	var p struct{ X, Y float64 }
	c.eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.scrollIntoView(); const r = e.getBoundingClientRect();
		return {X: r.left + r.width / 2, Y: r.top + r.height / 2}; })()`, css), &p)
	c.call("Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": p.X, "y": p.Y}, nil)
}

// screenshot writes the element selected by css, scrolled into view, as a PNG.
func (c *cdp) screenshot(css, path string) {
	c.t.Helper()
	var box struct{ X, Y, W, H float64 }
	c.eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.scrollIntoView(); const r = e.getBoundingClientRect();
		return {X: r.left + scrollX, Y: r.top + scrollY, W: r.width, H: r.height}; })()`, css), &box)
	if box.W < 10 || box.H < 10 {
		c.t.Fatalf("screenshot of %s: element is %v×%v", css, box.W, box.H)
	}
	var shot struct{ Data string }
	c.call("Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true,
		"clip": map[string]any{"x": box.X, "y": box.Y, "width": box.W, "height": box.H, "scale": 1}}, &shot)
	b, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		c.t.Fatal(err)
	}
}
