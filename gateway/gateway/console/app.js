// chemmy table console: plain JS over the gateway's HTTP/JSON side (the
// Connect protocol for calls, newline-delimited JSON for WatchTable). Every
// call carries the signed-in token; the gateway authenticates, authorizes
// and redacts exactly as for gRPC.
"use strict";

const T = "chemmy.table.v1.TableService";
const $ = (id) => document.getElementById(id);
const state = { token: sessionStorage.getItem("chemmy-token") || "", me: "", role: "", table: null, tableId: "", watch: null, refreshTimer: null };

const friendly = {
  TOKEN_MISSING: "Sign in with your token first.",
  TOKEN_UNKNOWN: "This token is not known: check it and sign in again.",
  TOKEN_INVALID: "This token is not valid.",
  TOKEN_EXPIRED: "Your token has expired: sign in again.",
  ROLE_NOT_ALLOWED: "Your role may not do that.",
  NOT_YOURSELF: "You may act only for yourself.",
  RATE_LIMITED: "Too many requests: wait a moment.",
  TOO_MANY_STREAMS: "Too many tables watched at once: close another view.",
  BACKEND_UNAVAILABLE: "The table service is not reachable: try again shortly.",
  NOT_YOUR_TURN: "It is not your turn.",
  INSUFFICIENT_FUNDS: "Not enough money in your account.",
  TABLE_NOT_FOUND: "There is no such table.",
  TABLE_CLOSED: "This table is closed.",
  BET_EXCEEDS_BANK: "Your bet is more than the bank has uncovered.",
  ODDS_UNAVAILABLE: "No advice at this table: its shoe's composition is not known to the table.",
  NOT_AT_DECISION: "There is no decision to take now.",
  NOT_SEATED: "You are not seated at this table.",
  ALREADY_SEATED: "You are already seated.",
};

function rid() {
  const r = (globalThis.crypto && crypto.randomUUID) ? crypto.randomUUID() : String(Math.random()).slice(2) + Date.now();
  return "console-" + r;
}

class CallError extends Error {
  constructor(code, message, reason, domain) { super(message); this.code = code; this.reason = reason; this.domain = domain; }
}

// errorFrom reads a Connect JSON error: the ErrorInfo's reason is in details[].debug.
function errorFrom(j, status) {
  let reason = "", domain = "";
  for (const d of (j && j.details) || []) {
    if (d.type === "google.rpc.ErrorInfo" && d.debug) { reason = d.debug.reason || ""; domain = d.debug.domain || ""; }
  }
  return new CallError((j && j.code) || "http_" + status, (j && j.message) || "HTTP " + status, reason, domain);
}

async function call(service, method, body) {
  const headers = { "Content-Type": "application/json" };
  if (state.token) headers.Authorization = "Bearer " + state.token;
  const resp = await fetch("/" + service + "/" + method, { method: "POST", headers, body: JSON.stringify(body || {}) });
  const text = await resp.text();
  let j = null;
  try { j = text ? JSON.parse(text) : {}; } catch (e) { j = null; }
  if (!resp.ok) throw errorFrom(j, resp.status);
  return j;
}

function showError(e) {
  const box = $("error");
  if (!e) { box.hidden = true; box.textContent = ""; box.dataset.reason = ""; return; }
  const reason = e.reason || "";
  const text = friendly[reason] || e.message || String(e);
  box.textContent = text + (reason ? " [" + reason + "]" : "") + (friendly[reason] && e.message ? " — " + e.message : "");
  box.dataset.reason = reason;
  box.dataset.code = e.code || "";
  box.hidden = false;
}

async function act(fn) {
  showError(null);
  try { return await fn(); } catch (e) { showError(e); return null; }
}

const short = (v, prefix) => (v || "").replace(prefix, "");
const staff = () => state.role === "ROLE_CROUPIER" || state.role === "ROLE_OPERATOR";

async function signIn() {
  state.token = $("token").value.trim() || state.token;
  sessionStorage.setItem("chemmy-token", state.token);
  const r = await act(() => call("chemmy.gateway.v1.GatewayService", "GetCaller", {}));
  if (!r) { $("whoami").textContent = ""; return; }
  state.me = r.subject; state.role = r.role;
  $("whoami").textContent = r.subject + " (" + short(r.role, "ROLE_").toLowerCase() + ")";
  $("whoami").dataset.subject = r.subject;
  for (const el of document.querySelectorAll(".staff-only")) el.hidden = !staff();
  await lobby();
  const q = new URLSearchParams(location.search).get("table");
  if (q && q !== state.tableId) openTable(q);
}

async function lobby() {
  const r = await act(() => call(T, "ListTables", { pageSize: 100 }));
  if (!r) return;
  const ul = $("tables");
  ul.textContent = "";
  for (const t of r.tables || []) {
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.type = "button"; b.textContent = "Open"; b.dataset.table = t.tableId;
    b.addEventListener("click", () => openTable(t.tableId));
    li.append(b, " " + t.tableId.slice(-8) + " " + short(t.state, "TABLE_STATE_") + " · " + (t.seats || []).length + " seated");
    li.dataset.table = t.tableId;
    ul.append(li);
  }
}

function openTable(id) {
  if (state.watch) state.watch.abort();
  state.tableId = id; state.table = null;
  history.replaceState(null, "", "?table=" + encodeURIComponent(id));
  $("table-view").hidden = false;
  $("table-id").textContent = id;
  $("log").textContent = "";
  watch(id);
}

// watch follows WatchTable as lines of JSON: the table first, then its
// events; each event refreshes the view with GetTable (made for this
// viewer). The stream is opened again if it ends.
async function watch(id) {
  const ctl = new AbortController();
  state.watch = ctl;
  $("live").textContent = "connecting";
  try {
    const resp = await fetch("/" + T + "/WatchTable", {
      method: "POST", signal: ctl.signal,
      headers: { "Content-Type": "application/json", Authorization: "Bearer " + state.token },
      body: JSON.stringify({ tableId: id }),
    });
    if (!resp.ok) {
      let j = null; try { j = await resp.json(); } catch (e) { /* not JSON */ }
      throw errorFrom(j, resp.status);
    }
    $("live").textContent = "live";
    const reader = resp.body.getReader();
    const dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl); buf = buf.slice(nl + 1);
        if (line.trim()) onWatch(JSON.parse(line));
      }
    }
  } catch (e) {
    if (ctl.signal.aborted) return;
    showError(e);
    if (e instanceof CallError && e.code !== "unavailable" && e.code !== "resource_exhausted") { $("live").textContent = "stopped"; return; }
  }
  if (ctl.signal.aborted || state.tableId !== id) return;
  $("live").textContent = "reconnecting";
  setTimeout(() => { if (state.tableId === id && state.watch === ctl) watch(id); }, 2000);
}

function onWatch(m) {
  if (m.error) { showError(errorFrom(m.error, 200)); return; }
  if (m.table) { render(m.table); return; }
  if (m.event) {
    const ev = m.event;
    const kind = Object.keys(ev).find((k) => !["eventId", "tableId", "coupId", "sequence", "occurTime", "certification"].includes(k)) || "event";
    const li = document.createElement("li");
    li.textContent = "#" + ev.sequence + " " + kind + " " + JSON.stringify(ev[kind] || {});
    li.dataset.kind = kind;
    $("log").prepend(li);
    clearTimeout(state.refreshTimer);
    state.refreshTimer = setTimeout(refresh, 80);
  }
}

async function refresh() {
  if (!state.tableId) return;
  try {
    const r = await call(T, "GetTable", { tableId: state.tableId });
    render(r.table);
  } catch (e) { showError(e); }
}

const suits = { C: "♣", D: "♦", H: "♥", S: "♠" };

function cards(el, list) {
  el.textContent = "";
  for (const c of list || []) {
    const s = document.createElement("span");
    s.className = "card";
    if (c.faceDown) {
      s.classList.add("face-down"); s.dataset.faceDown = "true"; s.textContent = "?"; s.title = "face down";
    } else {
      const code = c.code || "";
      s.dataset.code = code;
      s.textContent = code.slice(0, -1).replace("T", "10") + (suits[code.slice(-1)] || "");
      if (/[DH]$/.test(code)) s.classList.add("red");
    }
    el.append(s);
  }
}

function render(t) {
  if (!t || t.tableId !== state.tableId) return;
  state.table = t;
  const coup = t.coup || null;
  const shown = coup || t.lastCoup || {};
  $("state").textContent = short(t.state, "TABLE_STATE_");
  $("state").dataset.state = t.state || "";
  $("banker").textContent = t.bankerPlayerId || "—";
  $("bank").textContent = t.bank || "0";
  $("offered").textContent = t.offeredPlayerId || "—";
  const turn = (coup && (coup.decisionPlayerId || coup.turnPlayerId)) || t.offeredPlayerId || "";
  $("turn").textContent = turn ? turn + (turn === state.me ? " (you)" : "") : "—";
  $("turn").dataset.player = turn;
  const seats = $("seats"); seats.textContent = "";
  for (const s of t.seats || []) {
    const li = document.createElement("li");
    li.textContent = s.playerId + (s.playerId === t.bankerPlayerId ? " (banker)" : "");
    if (s.playerId === state.me) li.className = "me";
    seats.append(li);
  }
  const bets = $("bets"); bets.textContent = "";
  for (const b of shown.bets || []) {
    const li = document.createElement("li");
    li.textContent = b.playerId + " " + (b.banco ? "banco " : "") + b.amount;
    bets.append(li);
  }
  cards($("player-cards"), shown.playerCards);
  cards($("banker-cards"), shown.bankerCards);
  const total = (hand, v) => ((hand || []).length && !(hand || []).some((c) => c.faceDown) ? "(" + (v || 0) + ")" : "");
  $("player-total").textContent = total(shown.playerCards, shown.playerTotal);
  $("banker-total").textContent = total(shown.bankerCards, shown.bankerTotal);
  let res = "";
  if (shown.voided) res = "Coup voided: " + (shown.voidReason || "");
  else if (shown.outcome && shown.outcome !== "OUTCOME_UNSPECIFIED") {
    res = short(shown.outcome, "OUTCOME_").replace("_", " ").toLowerCase() + (shown.natural ? " (natural)" : "") +
      (shown.settled ? ", settled: commission " + (shown.commission || 0) + ", banker net " + (shown.bankerNet || 0) : "");
  }
  $("result").textContent = res;
  $("result").dataset.outcome = shown.outcome || "";
  tick();
}

function tick() {
  const t = state.table;
  const el = $("timeleft");
  if (!t || !t.turnDeadline) { el.textContent = "—"; return; }
  const left = Math.max(0, Math.round((Date.parse(t.turnDeadline) - Date.now()) / 1000));
  el.textContent = left + " s";
}
setInterval(tick, 1000);

// Actions: the table in each answer is shown at once.
async function tableAct(method, extra) {
  const r = await act(() => call(T, method, Object.assign({ requestId: rid(), tableId: state.tableId, playerId: state.me }, extra || {})));
  if (r && r.table) render(r.table);
  return r;
}

function bind() {
  $("login-form").addEventListener("submit", (e) => { e.preventDefault(); signIn(); });
  $("refresh").addEventListener("click", lobby);
  $("create-table").addEventListener("click", async () => {
    const r = await act(() => call(T, "CreateTable", { requestId: rid(), houseRules: {} }));
    if (r) { await lobby(); openTable(r.table.tableId); }
  });
  $("sit").addEventListener("click", () => tableAct("JoinTable"));
  $("leave").addEventListener("click", () => tableAct("LeaveTable"));
  $("accept-bank").addEventListener("click", () => tableAct("AcceptBank", { amount: $("bank-amount").value }));
  $("decline-bank").addEventListener("click", () => tableAct("DeclineBank"));
  $("pass-bank").addEventListener("click", () => tableAct("PassBank"));
  $("bet").addEventListener("click", () => tableAct("PlaceBet", { amount: $("bet-amount").value }));
  $("banco").addEventListener("click", () => tableAct("CallBanco"));
  $("decline-bet").addEventListener("click", () => tableAct("DeclineBet"));
  $("draw").addEventListener("click", () => tableAct("DecideDraw", { choice: "DRAW_CHOICE_DRAW" }));
  $("stand").addEventListener("click", () => tableAct("DecideDraw", { choice: "DRAW_CHOICE_STAND" }));
  $("advice").addEventListener("click", async () => {
    $("advice-text").textContent = "";
    const r = await act(() => call(T, "GetAdvice", { tableId: state.tableId, playerId: state.me }));
    if (r) $("advice-text").textContent = "draw EV " + Number(r.drawEv || 0).toFixed(4) + ", stand EV " + Number(r.standEv || 0).toFixed(4) + ": " + short(r.best, "DRAW_CHOICE_").toLowerCase();
  });
  $("void").addEventListener("click", () => {
    const c = state.table && (state.table.coup || state.table.lastCoup);
    return act(() => call(T, "VoidCoup", { requestId: rid(), tableId: state.tableId, coupId: (c && c.coupId) || "", reason: $("reason").value }));
  });
  $("close").addEventListener("click", () => act(() => call(T, "CloseTable", { requestId: rid(), tableId: state.tableId, reason: $("reason").value })));
  for (const el of document.querySelectorAll(".staff-only")) el.hidden = true;
  if (state.token) { $("token").value = state.token; signIn(); }
}
bind();
