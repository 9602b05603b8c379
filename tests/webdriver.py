"""A small client of the W3C WebDriver protocol (over python's urllib), for
the kyu web browser test: starts chromedriver, drives a headless Chromium.
No package to install: Debian's chromium and chromium-driver only."""
import base64
import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


class WebDriverError(Exception):
    pass


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Browser:
    def __init__(self, profile_dir, log_path, width=1280, height=720):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = open(log_path, "ab")
        self.driver = subprocess.Popen(
            ["chromedriver", f"--port={self.port}"], stdout=self.log, stderr=subprocess.STDOUT)
        self.sid = None
        deadline = time.time() + 60
        while True:
            try:
                if self._call("GET", "/status").get("ready"):
                    break
            except (OSError, WebDriverError):
                pass
            if time.time() > deadline or self.driver.poll() is not None:
                raise WebDriverError("chromedriver did not become ready")
            time.sleep(0.2)
        args = ["--headless=new", "--disable-gpu", "--no-first-run", "--disable-extensions",
                f"--window-size={width},{height}", f"--user-data-dir={profile_dir}",
                "--disable-dev-shm-usage"]
        if os.geteuid() == 0:
            args.append("--no-sandbox")  # Chromium's sandbox refuses to run as root
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:loggingPrefs": {"browser": "ALL"},
            "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": args}}}}
        self.sid = self._call("POST", "/session", caps)["sessionId"]

    def _call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                reply = json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            raise WebDriverError(f"{method} {path}: {e.code} {e.read()[:500]!r}") from None
        return reply.get("value", reply)

    def s(self, method, path, body=None):
        return self._call(method, f"/session/{self.sid}{path}", body)

    def get(self, url):
        self.s("POST", "/url", {"url": url})

    def js(self, script, *args):
        return self.s("POST", "/execute/sync", {"script": script, "args": list(args)})

    def find(self, css):
        return self.s("POST", "/element", {"using": "css selector", "value": css})[ELEMENT]

    def click(self, css):
        self.s("POST", f"/element/{self.find(css)}/click", {})

    def wait(self, script, what, timeout=60, *args):
        """Until script (a function body returning a value) returns
        something true; that value."""
        deadline = time.time() + timeout
        while True:
            v = self.js(script, *args)
            if v:
                return v
            if time.time() > deadline:
                raise WebDriverError(f"waited {timeout} s for {what}")
            time.sleep(0.25)

    def console_errors(self):
        """What the page logged at level SEVERE since the last call: uncaught
        exceptions, console.error, refused loads (chromedriver's log of the
        browser's console)."""
        entries = self.s("POST", "/se/log", {"type": "browser"})
        return [e["message"] for e in entries if e.get("level") == "SEVERE"]

    def show(self, base, hash, timeout=60):
        """Navigate the dashboard at base to hash ("#/jobs/failed") and wait
        until the page has drawn it (app.js sets body's data-shown)."""
        self.get(base + "/" + hash)
        self.wait("return document.body.dataset.shown === arguments[0]", "page " + hash, timeout, hash)

    def page_problems(self):
        """What is wrong on the page shown: visible text that a script made of
        a missing value ("null", "undefined", "NaN"), a page that could not
        load, and errors in the console."""
        bad = self.js(r"""
            const t = document.body.innerText;
            const m = t.match(/.{0,40}\b(null|undefined|NaN)\b.{0,40}/g) || [];
            const err = document.querySelector('#main p.bad');
            return m.concat(err ? [err.innerText] : []);""")
        return ["visible: " + x for x in bad] + ["console: " + x for x in self.console_errors()]

    def viewport(self, width, height, mobile=False):
        """Lay the page out for a screen of width x height CSS pixels (a
        phone's with mobile: its viewport meta tag applies), over the
        DevTools protocol: a window cannot be made that narrow."""
        self.s("POST", "/goog/cdp/execute", {"cmd": "Emulation.setDeviceMetricsOverride", "params": {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}})

    def layout_problems(self):
        """A broken layout at the current width: a page wider than the
        viewport (the body scrolls sideways), and elements that cross its
        left or right edge, unless a box that scrolls or clips them holds
        them (a wide table scrolls in its own box, by design)."""
        return self.js(r"""
            const w = document.documentElement.clientWidth, out = [];
            const sw = document.documentElement.scrollWidth;
            if (sw > w + 1) out.push('the page is ' + sw + ' px wide in a viewport of ' + w);
            const held = (e) => {
              for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
                const o = getComputedStyle(p).overflowX;
                if (o === 'auto' || o === 'scroll' || o === 'hidden') return true;
              }
              return false;
            };
            const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
              (typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\s+/).join('.') : '');
            for (const e of document.body.querySelectorAll('*')) {
              const r = e.getBoundingClientRect();
              if (!r.width || !r.height || getComputedStyle(e).visibility === 'hidden' || held(e)) continue;
              if (r.right > w + 1 || r.left < -1)
                out.push(name(e) + ' spans ' + Math.round(r.left) + '..' + Math.round(r.right) + ' of 0..' + w +
                  ': ' + (e.innerText || '').slice(0, 40));
              if (out.length >= 6) break;
            }
            return out;""")

    def screenshot(self, path):
        with open(path, "wb") as f:
            f.write(base64.b64decode(self.s("GET", "/screenshot")))

    def close(self):
        try:
            if self.sid:
                self.s("DELETE", "")
        except (OSError, WebDriverError):
            pass
        self.driver.terminate()
        try:
            self.driver.wait(10)
        except subprocess.TimeoutExpired:
            self.driver.kill()
        self.log.close()
