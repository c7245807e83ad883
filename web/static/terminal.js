// A shell's terminal: xterm.js over the websocket of /tasks/{id}/terminal/ws.
// Binary messages are terminal bytes both ways; text messages are JSON:
// {"type":"resize","cols":N,"rows":M} from here, {"type":"exit","code":N}
// from the server when the terminal's shell has exited.
//
// A dropped connection is retried with exponential backoff (up to 10 s).
// Each connection runs a fresh login shell in the task: what ran in the
// dropped one got a hangup.
(() => {
  const el = document.getElementById("terminal");
  if (!el || !window.Terminal || !window.FitAddon) return;
  const status = document.getElementById("terminal-status");
  const setStatus = (text, kind) => {
    status.textContent = text;
    status.className = "tag" + (kind ? " " + kind : "");
  };

  const term = new Terminal({
    cursorBlink: true,
    fontSize: 14,
    fontFamily: 'ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace',
    scrollback: 5000,
    theme: { background: "#0f1720", foreground: "#d7dde5" },
  });
  const fit = new FitAddon.FitAddon();
  term.loadAddon(fit);
  term.open(el);
  fit.fit();
  term.focus();

  const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + el.dataset.socket;
  const encoder = new TextEncoder();
  let ws = null;
  let delay = 500; // the next retry's, doubled up to 10 s
  let retry = null;
  let connectedOnce = false;
  let waitingForEnter = false; // after the shell exited or the task ended

  const send = (data) => {
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(data);
  };
  const sendSize = () => send(JSON.stringify({ type: "resize", cols: term.cols, rows: term.rows }));

  function connect() {
    retry = null;
    waitingForEnter = false;
    setStatus(connectedOnce ? "reconnecting…" : "connecting…");
    const sock = new WebSocket(url);
    sock.binaryType = "arraybuffer";
    ws = sock;
    let exitCode = null;
    sock.onopen = () => {
      if (connectedOnce) term.write("\r\n\x1b[2m[reconnected: a new shell session]\x1b[0m\r\n");
      connectedOnce = true;
      delay = 500;
      setStatus("connected", "ok");
      sendSize();
    };
    sock.onmessage = (ev) => {
      if (typeof ev.data !== "string") {
        term.write(new Uint8Array(ev.data));
        return;
      }
      try {
        const msg = JSON.parse(ev.data);
        if (msg.type === "exit") exitCode = msg.code;
      } catch (_) {
        // not ours: ignore
      }
    };
    sock.onclose = (ev) => {
      if (ws !== sock) return;
      ws = null;
      if (ev.code === 1000 || exitCode !== null) {
        setStatus("exited");
        term.write(`\r\n\x1b[2m[the shell exited with status ${exitCode ?? 0}; press Enter for a new one]\x1b[0m\r\n`);
        waitingForEnter = true;
        return;
      }
      if (ev.code === 4410 || ev.code === 1008) {
        setStatus("ended", "bad");
        term.write(`\r\n\x1b[31m[${ev.reason || "the shell has ended"}]\x1b[0m\r\n`);
        return;
      }
      const wait = delay;
      delay = Math.min(delay * 2, 10000);
      const why = ev.code === 4409 ? ev.reason || "the shell is not running yet" : "connection lost";
      setStatus(`${why}; reconnecting in ${Math.round(wait / 1000)} s…`, "bad");
      retry = setTimeout(connect, wait);
    };
  }

  term.onData((d) => {
    if (waitingForEnter) {
      if (d === "\r") connect();
      return;
    }
    send(encoder.encode(d));
  });
  term.onBinary((d) => {
    const b = new Uint8Array(d.length);
    for (let i = 0; i < d.length; i++) b[i] = d.charCodeAt(i) & 0xff;
    send(b);
  });
  term.onResize(sendSize);

  let pending = null;
  const refit = () => {
    if (pending) return;
    pending = requestAnimationFrame(() => {
      pending = null;
      fit.fit();
    });
  };
  window.addEventListener("resize", refit);
  if (window.ResizeObserver) new ResizeObserver(refit).observe(el);
  // Back online: don't wait out the backoff.
  window.addEventListener("online", () => {
    if (retry) {
      clearTimeout(retry);
      connect();
    }
  });

  connect();
})();
