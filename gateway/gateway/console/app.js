// chemmy table console: plain JS over the gateway's HTTP side, through the
// client generated from the protos (rpc.js, chemmyRPC: the Connect
// protocol, for calls and for WatchTable; gateway/console-src/rpc.js).
// Every call carries the signed-in token; the gateway authenticates,
// authorizes and redacts exactly as for gRPC. It plays the four games:
// chemin de fer, punto banco, baccarat banque and the old baccarat.
"use strict";

const T = "chemmy.table.v1.TableService";
const W = "chemmy.wallet.v1.WalletService";
const G = "chemmy.gateway.v1.GatewayService";
const $ = (id) => document.getElementById(id);
const state = {
  issued: 0, // calls whose answer holds the table, numbered as issued (render)
  token: sessionStorage.getItem("chemmy-token") || "", me: "", role: "",
  table: null, tableId: "", watch: null, refreshTimer: null,
  decisions: {}, // coup id -> [{hand, draw}] from draw_decided events
  advised: "", // the decision (coup id/hand) advice was asked for
  moneyKey: null, // what the balance was last read after
  balanceRead: 0, // the latest balance read (an older answer is dropped)
  currency: "", // the wallet's default currency, once known
  spotsFor: "", // the rules the spot buttons were made for
  seedTried: {}, // seed key -> a CommitSeed was tried (once per shoe)
  seedRevealTried: {}, // seed key -> a RevealSeed was tried
  seedTries: {}, // seed key -> calls made (transient failures are tried again, a few times)
  seedNotes: {}, // seed key -> what went wrong with the player's seed, in words
  elsewhereBusy: false, // revealElsewhere is reading tables
  lobbyResults: {}, // table id -> its last results [{number, winner, voided}], oldest first (ListTables' Table.recent_results)
};

// friendly: a plain message per ErrorInfo reason, from reasons.json (a
// test checks it names every reason the services return).
let friendly = {};
async function loadReasons() {
  try {
    const r = await fetch("/console/reasons.json");
    if (r.ok) friendly = await r.json();
  } catch (e) { /* the messages fall back to the services' own */ }
}

function rid() {
  const r = (globalThis.crypto && crypto.randomUUID) ? crypto.randomUUID() : String(Math.random()).slice(2) + Date.now();
  return "console-" + r;
}

class CallError extends Error {
  constructor(code, message, reason, domain, metadata) {
    super(message); this.code = code; this.reason = reason; this.domain = domain; this.metadata = metadata || {};
  }
}

// errorFrom is a CallError of a failure as chemmyRPC reports it: the
// code as the Connect protocol names it, the message, and the ErrorInfo
// (reason, domain, metadata).
function errorFrom(f) {
  if (f instanceof CallError) return f;
  f = f || {};
  return new CallError(f.code || "unknown", f.message || String(f), f.reason || "", f.domain || "", f.metadata);
}

// sparse reads a message's JSON into the shape this console was written
// for: its checks ("x ? ... : ...") take a missing field for zero, so the
// zero values of fields of implicit presence (a hand total of 0, an unset
// enum's _UNSPECIFIED name, an empty list) are dropped (JSON.parse
// reviver; chemmyRPC's JSON already leaves most out). The fields of
// explicit presence keep theirs: 0 there is a value, not "unset".
const explicit = new Set(["commissionBp", "bankerOption3Vs9", "bankerOption5Vs4", "resultPauseMs", "maxMoveTop",
  "currencyExponent", "balanceBefore", "balanceAfter", "exponent"]);
function sparse(key, v) {
  if (Array.isArray(this) || explicit.has(key)) return v;
  if (v === 0 || v === "0" || v === false || v === "" || (Array.isArray(v) && v.length === 0) ||
      (typeof v === "string" && v.endsWith("_UNSPECIFIED"))) return undefined;
  return v;
}

// reshape is a message's JSON (chemmyRPC) as sparse shapes it.
const reshape = (j) => JSON.parse(JSON.stringify(j || {}), sparse);

// call calls service's method with the request body (JSON) through the
// generated client, with the signed-in token, and answers the response's
// JSON; a failure is thrown as a CallError.
async function call(service, method, body) {
  chemmyRPC.setToken(state.token);
  try {
    return reshape(await chemmyRPC.call(service, method, body || {}));
  } catch (e) {
    throw errorFrom(e);
  }
}

// explain is the plain text of an error: its reason's message, the
// reason, and what the service said.
function explain(e) {
  const reason = e.reason || "";
  const text = friendly[reason] || e.message || String(e);
  const meta = Object.entries(e.metadata || {}).map(([k, v]) => k + ": " + String(v).replace(/_/g, " ")).join(", ");
  return text + (meta ? " (" + meta + ")" : "") + (reason ? " [" + reason + "]" : "") + (friendly[reason] && e.message ? " — " + e.message : "");
}

function showError(e) {
  const box = $("error");
  if (!e) { box.hidden = true; box.textContent = ""; box.dataset.reason = ""; return; }
  box.textContent = explain(e);
  box.dataset.reason = e.reason || "";
  box.dataset.code = e.code || "";
  box.hidden = false;
}

async function act(fn) {
  showError(null);
  try { return await fn(); } catch (e) { showError(e); return null; }
}

const short = (v, prefix) => (v || "").replace(prefix, "");
const lower = (v, prefix) => short(v, prefix).replace(/_/g, " ").toLowerCase();
const num = (v) => Number(v || 0);
const isStaff = () => state.role === "ROLE_CROUPIER" || state.role === "ROLE_OPERATOR";
const isPlayer = () => state.role === "ROLE_PLAYER";
// roleName: a caller's role in the header, "player" in "bob (player)"
// (FR: "joueur", FR's "role: player": apart from the game's "player", the
// ponte).
const roleName = (role) => { const r = lower(role, "ROLE_"); return (LANG === "fr" && FR["role: " + r]) || r; };
const you = (p) => (p && p === state.me ? p + " (" + tr("you") + ")" : p || "");
const names = (ids) => (ids || []).map(you).join(", ");
const two = (n) => String(n).padStart(2, "0");
// clock is a timestamp's local time of day, HH:MM:SS.
function clock(ts) {
  const d = new Date(ts);
  return isNaN(d) ? "?" : two(d.getHours()) + ":" + two(d.getMinutes()) + ":" + two(d.getSeconds());
}

// LANG is the console's language, from the browser's: French for a
// browser that prefers it, else English. tr is a text in it (FR holds the
// French of the English texts; a text without one shows in English).
const LANG = /^fr\b/i.test((navigator.languages && navigator.languages[0]) || navigator.language || "") ? "fr" : "en";
const FR = {
  // The caller's role (roleNames) in the header.
  // Fee rounds in the history (roundText).
  "seat fee": "droit de table", "bank auction fee": "droit d'enchère de la banque", "fee": "droit", "not charged": "non perçu", "{0}: {1}": "{0} : {1}",
  "role: player": "joueur", "role: croupier": "croupier", "role: operator": "opérateur", "role: auditor": "auditeur", "role: service": "service",
  // The "Fair shoe" line (renderFair) and the seed notes (seedNote): a
  // seed is a "graine", a commitment an "engagement".
  "a prepared order (certification shoe): no seeds": "un ordre préparé (sabot de certification) : pas de graines",
  "no server commitment": "pas d'engagement du serveur", "server commitment {0}… · ": "engagement du serveur {0}… · ",
  "seeded with the seeds of {0}": "ensemencé avec les graines de {0}",
  "no player entropy: no player's seed is in this shoe": "pas d'entropie des joueurs : aucune graine de joueur dans ce sabot",
  "commitments fixed ({0}): revealed {1}, reveal by {2}": "engagements arrêtés ({0}) : révélées {1}, à révéler avant {2}", "none": "aucune",
  "seeds committed by {0}": "graines engagées par {0}", "no seed committed yet": "aucune graine engagée pour l'instant",
  ", commitments until {0}": ", engagements jusqu'à {0}", "its player seed is {0}'s cut": "sa graine de joueur est la coupe de {0}",
  "takes no players' seeds": "ne prend pas de graines de joueurs", " · withheld at this table: {0}": " · retenues à cette table : {0}",
  "SHA-256 of the shoe's server seed: {0}": "SHA-256 de la graine serveur du sabot : {0}", " (commitment {0}…)": " (engagement {0}…)",
  "You withheld a committed seed at this table: it takes no seed of yours again.": "Vous avez retenu une graine engagée à cette table : elle ne prend plus de graine de vous.",
  "Your seed is in this shoe{0}.": "Votre graine est dans ce sabot{0}.", "Your seed is not in this shoe.": "Votre graine n'est pas dans ce sabot.",
  "Your seed is revealed{0}: the shoe is seeded once every committed seed is in.": "Votre graine est révélée{0} : le sabot est ensemencé dès que toutes les graines engagées sont là.",
  "Revealing your seed{0}…": "Révélation de votre graine{0}…",
  "Your seed is committed{0}: the console reveals it when the table asks.": "Votre graine est engagée{0} : la console la révèle quand la table le demande.",
  "Sit down or bet, and the console commits a seed of yours to this shoe.": "Asseyez-vous ou pontez, et la console engage une graine de vous dans ce sabot.",
  "Committing your seed…": "Engagement de votre graine…", "Your seed: ": "Votre graine : ", "Your seed in shoe {0}: ": "Votre graine du sabot {0} : ",
  ". Once the shoe is closed, check it on its GetShoeReveal (shoe {0}): ": ". Une fois le sabot fermé, vérifiez-le sur son GetShoeReveal (sabot {0}) : ",
  "This browser gives no secure random numbers: the console commits no seed of yours.": "Ce navigateur ne donne pas de nombres aléatoires sûrs : la console n'engage aucune graine de vous.",
  "This browser keeps no local storage: the console commits no seed of yours (a reload would lose it before the reveal).":
    "Ce navigateur ne garde rien en stockage local : la console n'engage aucune graine de vous (un rechargement la perdrait avant la révélation).",
  "Your seed was not committed: {0}": "Votre graine n'a pas été engagée : {0}", "Your seed was not revealed: {0}": "Votre graine n'a pas été révélée : {0}",
  " Reveal its seed yourself (RevealSeed) by {0}, or the shoe is abandoned and this table takes no seed of yours again.":
    " Révélez sa graine vous-même (RevealSeed) avant {0}, sinon le sabot est abandonné et cette table ne prend plus de graine de vous.",
  "Your commitment {0}… was not made in this browser.": "Votre engagement {0}… n'a pas été fait dans ce navigateur.",
  "Your commitment {0}… is not that of the seed this browser keeps.": "Votre engagement {0}… n'est pas celui de la graine que garde ce navigateur.",
  "At table {0}: {1}": "À la table {0} : {1}",
  // The page (index.html): translateStatic.
  "Sign in": "Se connecter", "Lobby": "Salle", "every game": "tous les jeux", "hide closed": "cacher les tables fermées", "Refresh": "Actualiser",
  "Table": "Table", "Game": "Jeu", "Stakes": "Enjeux", "Seats": "Places", "Last": "Derniers coups", "State": "État",
  "New table": "Nouvelle table", "Create a table": "Ouvrir une table",
  "Banker": "Banquier", "Bank": "Banque", "Turn": "Tour", "Time left": "Temps restant", "Offered to": "Offerte à", "Shoe": "Sabot",
  "Fair shoe": "Sabot équitable", "Bets": "Mises", "in betting order": "dans l'ordre du jeu", "Events": "Événements", "History": "Historique",
  "Continue playing": "Continuer à jouer", "Stop after this coup": "Arrêter après ce coup",
  "right side": "côté droit", "left side": "côté gauche", "right": "droite", "left": "gauche", "à cheval (both)": "à cheval (les deux)",
  "Sit down": "S'asseoir", "Join the gallery": "Rejoindre la galerie", "Leave": "Quitter la table",
  "Take the bank": "Prendre la banque", "Bid for the bank": "Enchérir pour la banque", "Decline the bank": "Refuser la banque",
  "Pass the bank": "La main passe", "Raise the bank": "Augmenter la banque", "Do not raise": "Ne pas augmenter",
  "Bet": "Ponter", "Banco!": "Banco !", "No bet": "Pas de mise", "over the bank": "au-delà de la banque",
  "Move top cards to the bottom": "Passer des cartes du dessus dessous", "Draw (carte)": "Carte", "Stand (non)": "Non",
  "Void the coup": "Annuler le coup", "Close the table": "Fermer la table", "Open": "Ouvrir", "Stake": "Mise",
  "chemin de fer": "chemin de fer", "punto banco": "punto banco", "baccarat banque": "baccara banque", "old baccarat": "baccara à l'ancienne",
  // app.js
  "Nothing for you to do now.": "Rien à faire pour vous pour l'instant.", "balance": "solde", "held": "bloqué",
  "bets": "mises", "house limit": "plafond de la maison", "house bank": "banque de la maison", "bank from": "banque dès", "stakes": "mises",
  "certification": "certification", "coup": "coup", "Coup": "Coup", "voided": "annulé", "this table": "cette table", "table": "table",
  "Your last rounds": "Vos derniers coups", "This table's last rounds": "Les derniers coups de cette table",
  "You have played no round yet.": "Vous n'avez encore joué aucun coup.", "No round at this table yet.": "Aucun coup à cette table.",
  "you won {0}": "vous gagnez {0}", "you lost {0}": "vous perdez {0}", "as the banker": "comme banquier",
  "no money moved: your stake is returned": "rien ne bouge : votre mise vous est rendue", "voided: your stake is returned": "annulé : votre mise vous est rendue",
  "in play": "en cours", "the bank wins": "la banque gagne", "the bank loses": "la banque perd", "stand-off": "égalité", "settled": "réglé",
  "bank net": "net de la banque", "commission": "cagnotte", "Your turn: {0}.": "À vous : {0}.",
  "waiting for players": "en attente de joueurs", "offering bank": "banque offerte", "auction": "enchères", "betting": "mises",
  "decision": "décision", "bank raise": "suite de la banque", "dealing": "donne", "settling": "règlement", "result": "résultat", "closed": "fermée",
  "players to sit down": "que des joueurs s'asseyent", "three players to sit down": "que trois joueurs s'asseyent",
  "take the bank or decline": "prendre la banque ou la refuser", "take the bank (a baccarat) or decline": "prendre la banque (un baccara) ou la refuser",
  "any seated player to take the bank at {0}": "qu'un joueur assis prenne la banque à {0}", "bids for the bank": "les enchères pour la banque",
  "bets on the layout": "les mises sur le tapis", "punters' stakes against {0}": "les mises des pontes contre {0}",
  "bet, banco or pass ({0} uncovered)": "ponter, banco ou passer ({0} à couvrir)", "bet on a side, or pass": "ponter sur un tableau, ou passer",
  "draw or stand ({0} hand)": "carte ou non (main {0})", "raise the bank or not": "suivre la banque ou non",
  "announce a move of top cards (0..{0})": "annoncer des cartes passées dessous (0..{0})", "the deal": "la donne", "the settlement": "le règlement",
  "the next coup (result shown)": "le coup suivant (résultat affiché)", "nothing: the table is closed": "rien : la table est fermée",
  "player": "ponte", "banker": "banquier", "punter": "ponte", "the bank": "la banque",
  "Not an amount of": "Pas un montant en", "bank wins": "la banque gagne", "player wins": "le ponte gagne", "tie": "égalité", "natural": "naturel",
  "player pair": "paire du ponte", "bank pair": "paire de la banque", "house net": "net de la maison", "banker net": "net du banquier",
  "bank": "banque", "bank loses": "la banque perd", "stand off": "égalité", "seat": "place", "Player": "Ponte", "Banker": "Banquier", "Right": "Droite", "Left": "Gauche",
  "Punter": "Ponte", "plays the right hand": "joue le tableau de droite",
  "plays the left hand": "joue le tableau de gauche", "Gallery": "Galerie", "Roads": "Tableaux", "this table's coups": "les coups de cette table",
  "This table's last coups": "Les derniers coups de cette table", "you": "vous", "({0} free)": "({0} libres)", "updated": "à jour", "seats": "places",
  "shoe {0}, {1} coups played": "sabot {0}, {1} coups joués", "certification shoe": "sabot de certification", "shoe": "sabot",
  "Bead plate": "Perles", "Big road": "Grande route", "Big eye boy": "Gros œil", "Small road": "Petite route", "Cockroach pig": "Cafard", "at most": "au plus", "decimals": "décimales", "no decimals": "sans décimales", "the table's currency": "la monnaie de la table",
};

// translateStatic puts the page's own texts (index.html) in the
// console's language: every text node and placeholder FR has.
function translateStatic() {
  document.documentElement.lang = LANG;
  if (LANG !== "fr") return;
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const text = n.nodeValue.trim();
    if (text && FR[text]) n.nodeValue = n.nodeValue.replace(text, FR[text]);
  }
}
const tr = (s) => (LANG === "fr" && FR[s]) || s;
// tf is tr of a text with {0}, {1}, ... filled in with args.
const tf = (s, ...args) => tr(s).replace(/\{(\d)\}/g, (_, i) => String(args[Number(i)]));

// Money. Every amount of the services is an integer in minor units of
// its currency (int64, as a JSON string): 35950 at an EUR table is 359.50
// EUR. money is an amount in major units, as the console's language
// writes them, with exp digits after the decimal mark (the currency's
// exponent: EUR 2, JPY 0, KWD 3): money(35950, 2) is "359.50" in English,
// "359,50" in French; money(35950, 0) "35,950". Exact for any int64.
// money(v, exp, lang) writes it as lang does ("en" or "fr"; the
// console's by default).
const separatorsOf = (lang) => {
  const parts = new Intl.NumberFormat(lang === "fr" ? "fr-FR" : "en-GB").formatToParts(12345.6);
  const part = (type, dflt) => (parts.find((x) => x.type === type) || {}).value || dflt;
  return { group: part("group", ","), decimal: part("decimal", ".") };
};
const SEPARATORS_OF = { en: separatorsOf("en"), fr: separatorsOf("fr") };
const SEPARATORS = SEPARATORS_OF[LANG];
function money(v, exp, lang) {
  const sep = SEPARATORS_OF[lang] || SEPARATORS;
  let n;
  try { n = BigInt(String(v || 0)); } catch (e) { return String(v); }
  exp = Math.max(0, Number(exp) || 0);
  const neg = n < 0n;
  if (neg) n = -n;
  const digits = n.toString().padStart(exp + 1, "0");
  const whole = digits.slice(0, digits.length - exp), frac = digits.slice(digits.length - exp);
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, sep.group);
  return (neg ? "-" : "") + grouped + (exp ? sep.decimal + frac : "");
}

// minorOf is the amount a player typed in major units (e.g. "359.5",
// "359,50") in minor units of a currency of exponent exp, as a string
// ("35950"); null when it is no amount or has more decimals than the
// currency has.
function minorOf(text, exp) {
  let s = String(text || "").replace(/[\s\u202f\u00a0']/g, "");
  const dot = s.lastIndexOf("."), comma = s.lastIndexOf(",");
  if (dot >= 0 && comma >= 0) s = dot > comma ? s.replace(/,/g, "") : s.replace(/\./g, "").replace(",", ".");
  else s = s.replace(",", ".");
  const m = /^(\d+)(?:\.(\d*))?$/.exec(s);
  exp = Math.max(0, Number(exp) || 0);
  if (!m || (m[2] || "").length > exp) return null;
  return (BigInt(m[1]) * 10n ** BigInt(exp) + BigInt((m[2] || "").padEnd(exp, "0") || "0")).toString();
}

// The currencies' exponents, by code ("" the wallet's default), as the
// tables, events and accounts give them or as wallet GetCurrency answers.
const exponents = {};
const asked = {};
// expOf is the exponent of table t's currency (or of its currency code):
// Table.currency_exponent, else the one learnt for its code, else (while
// GetCurrency is asked) 2.
function expOf(t) {
  const code = typeof t === "string" ? t : (t && t.currencyCode) || "";
  if (t && typeof t === "object" && t.currencyExponent !== undefined && t.currencyExponent !== null) {
    exponents[code] = Number(t.currencyExponent);
    return exponents[code];
  }
  if (exponents[code] !== undefined) return exponents[code];
  if (!asked[code] && state.me) {
    asked[code] = true;
    call(W, "GetCurrency", { currencyCode: code }).then((r) => {
      const c = r.currency || {};
      exponents[code] = Number(c.exponent || 0);
      if (state.table) render(state.table);
      lobby();
    }).catch(() => { /* shown with 2 */ });
  }
  return 2;
}
// cash is amount v of table t in major units; cashCode adds the currency.
const cash = (v, t) => money(v, expOf(t));
const codeOf = (t) => (t && t.currencyCode) || state.currency || "";
const cashCode = (v, t) => cash(v, t) + (codeOf(t) ? " " + codeOf(t) : "");

// The games: their key, name and house rules' field.
const GAMES = {
  VARIANT_CHEMIN_DE_FER: { key: "cf", name: "chemin de fer", rules: "houseRules" },
  VARIANT_PUNTO_BANCO: { key: "pb", name: "punto banco", rules: "puntoBancoRules" },
  VARIANT_BACCARAT_BANQUE: { key: "banque", name: "baccarat banque", rules: "banqueRules" },
  VARIANT_OLD_BACCARAT: { key: "old", name: "old baccarat", rules: "oldBaccaratRules" },
};
const gameOf = (t) => GAMES[t.variant] || GAMES.VARIANT_CHEMIN_DE_FER;
const rulesOf = (t) => t[gameOf(t).rules] || {};

function range(t, lo, hi) { return cash(lo, t) + (num(hi) ? "–" + cash(hi, t) : "+"); }

// stakesText: a table's stakes from its house rules, in major units of
// its currency (named at the end).
function stakesText(t) {
  const code = codeOf(t);
  return stakesOf(t) + (code ? " " + code : "");
}

function stakesOf(t) {
  const r = rulesOf(t);
  switch (gameOf(t).key) {
    case "pb": return tr("bets") + " " + range(t, r.minBet, r.maxBet) + (num(r.houseLimit) ? ", " + tr("house limit") + " " + cash(r.houseLimit, t) : "");
    case "banque": return (r.houseBank ? tr("house bank") : tr("bank from") + " " + cash(r.minimumBank, t)) + ", " + tr("bets") + " " + range(t, r.minBet, r.maxBet);
    case "old": return tr("bank from") + " " + cash(r.minimumBank, t) + ", " + tr("stakes") + " " + range(t, r.minStake, r.maxStake);
    default: return tr("bank from") + " " + cash(r.minimumBank, t) + (num(r.houseLimit) ? ", " + tr("house limit") + " " + cash(r.houseLimit, t) : "");
  }
}

// seatsText: seats taken of those the house rules give.
function seatsText(t) {
  const r = rulesOf(t), seats = t.seats || [];
  if (gameOf(t).key === "banque") {
    const per = num(r.maxSeatsPerSide);
    const n = (side) => seats.filter((s) => s.side === side).length;
    return tr("right") + " " + n("BANQUE_SIDE_RIGHT") + "/" + per + ", " + tr("left") + " " + n("BANQUE_SIDE_LEFT") + "/" + per;
  }
  const max = num(r.maxSeats);
  return seats.length + "/" + max + " " + tf("({0} free)", Math.max(0, max - seats.length));
}

async function signIn() {
  state.token = $("token").value.trim() || state.token;
  sessionStorage.setItem("chemmy-token", state.token);
  const r = await act(() => call(G, "GetCaller", {}));
  if (!r) { $("whoami").textContent = ""; return; }
  state.me = r.subject; state.role = r.role; state.currency = "";
  $("whoami").textContent = r.subject + " (" + roleName(r.role) + ")";
  $("whoami").dataset.subject = r.subject;
  visibility();
  state.moneyKey = null;
  try { // the wallet's default currency: that of a table without one
    const cur = (await call(W, "GetCurrency", {})).currency || {};
    if (cur.currencyCode) { state.currency = cur.currencyCode; exponents[""] = Number(cur.exponent || 0); exponents[cur.currencyCode] = exponents[""]; }
  } catch (e) { /* learnt from the player's account instead */ }
  refreshBalance();
  await lobby();
  const q = new URLSearchParams(location.search).get("table");
  if (q && q !== state.tableId) openTable(q);
}

// refreshBalance shows the signed-in player's account in the currency of
// the open table (wallet GetAccount, see ownAccount): its balance, its
// currency and what is held on it; 0 when he has no account there yet.
async function refreshBalance() {
  const el = $("balance");
  if (!isPlayer()) { el.textContent = ""; return; }
  const n = ++state.balanceRead;
  const cur = (state.table && state.table.currencyCode) || "";
  let a = {};
  try {
    a = await ownAccount(cur);
  } catch (e) {
    if (e.reason !== "ACCOUNT_NOT_FOUND") { if (n === state.balanceRead) showError(e); return; }
  }
  if (n !== state.balanceRead) return; // a later read (another table) shows its own
  const code = a.currencyCode || cur || state.currency;
  const exp = a.currencyExponent !== undefined ? Number(a.currencyExponent) : state.table ? expOf(state.table) : expOf(cur);
  if (a.currencyExponent !== undefined && code) exponents[code] = exp;
  el.textContent = tr("balance") + " " + money(a.balance, exp) + (code ? " " + code : "") + (num(a.held) ? " · " + tr("held") + " " + money(a.held, exp) : "");
  el.dataset.balance = String(num(a.balance));
  el.dataset.held = String(num(a.held));
  el.dataset.currency = code;
}

// ownAccount reads the signed-in player's wallet account in currency cur
// (docs/walkthroughs/chemin-de-fer.md, "Currency"): player:<id> in the wallet's default currency (or
// cur ""), player:<id>@<cur> in another. The default currency is learnt
// from the player:<id> account, or from the wallet refusing the suffix of
// its default currency (INVALID_ACCOUNT: that account has no suffix).
// No account yet: ACCOUNT_NOT_FOUND.
async function ownAccount(cur) {
  const base = "player:" + state.me;
  if (cur && cur !== state.currency) {
    try {
      return (await call(W, "GetAccount", { accountId: base + "@" + cur })).account || {};
    } catch (e) {
      if (e.reason !== "INVALID_ACCOUNT") throw e;
      state.currency = cur;
    }
  }
  const a = (await call(W, "GetAccount", { accountId: base })).account || {};
  if (a.currencyCode) state.currency = a.currencyCode;
  return a;
}

// lobby lists the first 100 tables that pass the lobby's filters
// (ListTables, paging on past short pages: a call reads at most 1,000
// tables, so a page may hold few or none); it is read again every few
// seconds while the page is shown.
async function lobby() {
  if (!state.me) return;
  const tables = [];
  try {
    let token;
    for (let calls = 0; calls < 20 && tables.length < 100; calls++) {
      const r = await call(T, "ListTables", { pageSize: 100 - tables.length, pageToken: token,
        variant: $("lobby-game").value || undefined, excludeClosed: $("lobby-open").checked });
      tables.push(...(r.tables || []));
      token = r.nextPageToken;
      if (!token) break;
    }
  } catch (e) { $("lobby-live").textContent = "not updated"; showError(e); return; }
  $("lobby-live").textContent = tr("updated") + " " + new Date().toLocaleTimeString();
  const body = $("tables");
  body.textContent = "";
  for (const t of tables) {
    state.lobbyResults[t.tableId] = t.recentResults || [];
    body.append(lobbyRow(t));
  }
}
setInterval(() => { if (document.visibilityState === "visible") lobby(); }, 5000);

// lobbyRow is a table's row in the lobby: its game, stakes, seats, state.
function lobbyRow(t) {
  const row = document.createElement("tr");
  row.dataset.table = t.tableId;
  row.dataset.game = gameOf(t).key;
  row.dataset.state = t.state || "";
  if (t.tableId === state.tableId) row.className = "current";
  const cells = [["name", "#" + shortId(t.tableId)], ["game", tr(gameOf(t).name) + (t.certification ? " (" + tr("certification") + ")" : "")],
    ["stakes", stakesText(t)], ["seats", seatsText(t)], ["last", lastResults(t)], ["state", tr(lower(t.state, "TABLE_STATE_"))]];
  for (const [cls, text] of cells) {
    const td = document.createElement("td");
    td.textContent = text;
    td.className = cls;
    if (cls === "name") td.title = t.tableId;
    if (cls === "last") td.title = lastResultsTitle(t);
    row.append(td);
  }
  const td = document.createElement("td");
  const b = document.createElement("button");
  b.type = "button"; b.textContent = tr("Open"); b.dataset.table = t.tableId; b.title = t.tableId;
  b.addEventListener("click", () => openTable(t.tableId));
  td.append(b);
  row.append(td);
  return row;
}

// lastResults: a table's last results for the lobby: the last beads of
// a punto banco shoe, else its last coups (ListTables'
// Table.recent_results, with the last coup of its live view), each as
// B (the bank won), P (the player, or every punter, won), T (a tie, or
// the bank won some hands and lost others) or × (voided); newest last.
function lastResults(t) {
  const beads = ((t.roads || {}).beadPlate || []).slice(-8);
  if (beads.length) return beads.map((b) => ({ ROAD_WINNER_BANK: "B", ROAD_WINNER_PLAYER: "P", ROAD_WINNER_TIE: "T" }[b.winner] || "?")).join(" ");
  const rs = lobbyResultsOf(t);
  return rs.length ? rs.map((r) => r.voided ? "×" : { ROAD_WINNER_BANK: "B", ROAD_WINNER_PLAYER: "P", ROAD_WINNER_TIE: "T" }[r.winner] || "?").join(" ") : "—";
}

// lastResultsTitle: the lobby's last results of a game without roads in
// words ("coup 5: bank wins"), one per line, for the cell's tooltip.
function lastResultsTitle(t) {
  if (((t.roads || {}).beadPlate || []).length) return "";
  const words = { ROAD_WINNER_BANK: "bank wins", ROAD_WINNER_PLAYER: "bank loses", ROAD_WINNER_TIE: "stand off" };
  return lobbyResultsOf(t).map((r) => tr("coup") + " " + (r.number || "") + ": " + tr(r.voided ? "voided" : words[r.winner] || "")).join("\n");
}

// lobbyResultsOf: table t's last results, at most 6, oldest first: those
// ListTables gave, and the table's last coup once finished (a table view
// carries no recent_results).
function lobbyResultsOf(t) {
  let rs = (state.lobbyResults[t.tableId] || []).slice();
  const cp = t.lastCoup;
  if (cp && cp.number && (cp.settled || cp.voided) && !rs.some((r) => Number(r.number) === Number(cp.number))) {
    rs.push({ number: cp.number, winner: cp.voided ? "" : coupWinner(cp), voided: !!cp.voided });
    rs.sort((a, b) => Number(a.number) - Number(b.number));
    rs = rs.slice(-6);
    state.lobbyResults[t.tableId] = rs;
  }
  return rs;
}

// The open table's lobby row follows the table view at once.
function updateLobbyRow(t) {
  const old = document.querySelector('#tables tr[data-table="' + CSS.escape(t.tableId) + '"]');
  if (old) old.replaceWith(lobbyRow(t));
}

function openTable(id) {
  if (state.watch) state.watch.abort();
  state.tableId = id; state.table = null; state.beads = {}; state.decisions = {}; state.advised = ""; state.spotsFor = ""; state.rounds = null;
  $("history-list").textContent = ""; $("history-note").textContent = ""; $("my-result").textContent = "";
  $("recent-list").textContent = ""; $("recent").hidden = true;
  history.replaceState(null, "", "?table=" + encodeURIComponent(id));
  $("table-view").hidden = false;
  $("table-id").textContent = id;
  $("log").textContent = "";
  $("reality").hidden = true;
  $("advice-text").textContent = "";
  for (const row of document.querySelectorAll("#tables tr")) row.classList.toggle("current", row.dataset.table === id);
  watch(id);
}

// watch follows WatchTable (a server stream of the generated client):
// the table first, then its events; each event refreshes the view with
// GetTable (made for this viewer). The stream is opened again if it ends.
async function watch(id) {
  const ctl = new AbortController();
  state.watch = ctl;
  $("live").textContent = "connecting";
  chemmyRPC.setToken(state.token);
  try {
    await chemmyRPC.watch(T, "WatchTable", { tableId: id }, {
      signal: ctl.signal,
      onOpen: () => { $("live").textContent = "live"; },
      onMessage: (m) => onWatch(reshape(m)),
    });
  } catch (e) {
    if (ctl.signal.aborted) return;
    if (!(e instanceof Error)) e = errorFrom(e); // a failure of the call, not the page's own
    showError(e);
    if (e instanceof CallError && e.code !== "unavailable" && e.code !== "resource_exhausted") { $("live").textContent = "stopped"; return; }
  }
  if (ctl.signal.aborted || state.tableId !== id) return;
  $("live").textContent = "reconnecting";
  setTimeout(() => { if (state.tableId === id && state.watch === ctl) watch(id); }, 2000);
}

// The envelope's fields (chemmy.events.v1.TableEvent); the other one is
// the payload, named by its kind.
const EVENT_FIELDS = ["eventId", "tableId", "coupId", "sequence", "occurTime", "certification", "currencyCode", "currencyExponent", "operatorId"];

function onWatch(m) {
  if (m.table) {
    // The stream's first message: the table, with its last finished
    // coups (Table.recent_coups) as the public saw them.
    if (m.table.tableId === state.tableId && m.table.recentCoups) showRecent(m.table, m.table.recentCoups);
    render(m.table);
    return;
  }
  if (m.event) {
    const ev = m.event;
    const kind = Object.keys(ev).find((k) => !EVENT_FIELDS.includes(k)) || "event";
    const p = ev[kind] || {};
    if (kind === "drawDecided" && ev.coupId) {
      (state.decisions[ev.coupId] = state.decisions[ev.coupId] || []).push({ hand: p.hand, draw: !!p.draw });
    }
    if (kind === "realityCheck" && p.playerId === state.me) showRealityCheck(p);
    if (kind === "realityCheckAnswered" && p.playerId === state.me) hideRealityCheck(p.checkNumber);
    const li = document.createElement("li");
    li.textContent = (ev.sequence ? "#" + ev.sequence + " " : "") + describe(kind, p, ev.currencyExponent !== undefined ? ev.currencyExponent : expOf(state.table));
    li.dataset.kind = kind;
    $("log").prepend(li);
    clearTimeout(state.refreshTimer);
    state.refreshTimer = setTimeout(refresh, 80);
  }
}

const handNames = { HAND_PLAYER: "player", HAND_BANKER: "banker", HAND_RIGHT: "right", HAND_LEFT: "left", HAND_PUNTER: "punter" };
const handName = (h) => handNames[h] || "hand";
const outcomeNames = { OUTCOME_BANK_WINS: "the bank wins", OUTCOME_BANK_LOSES: "the bank loses", OUTCOME_STAND_OFF: "stand-off" };

// cardText is a card as the log and the table write it ("10♥"); a card
// face down in words (i: 0 English, 1 French; the console's by default).
function cardText(c, i) {
  if (!c || c.faceDown) return (i === undefined ? LANG === "fr" : i === 1) ? "face cachée" : "face down";
  const code = c.code || "";
  return code.slice(0, -1).replace("T", "10") + (suits[code.slice(-1)] || "");
}

// A reality check (the player's alone: WatchTable sends it to him only)
// asks him to go on or stop; his answer is AnswerRealityCheck. Stop ends
// his session at the table once the coup he plays in is over.
function showRealityCheck(p) {
  const mins = Math.floor(num(p.sessionElapsedMs) / 60000);
  $("reality-text").textContent = "Reality check " + num(p.checkNumber) + ": you have played " + num(p.coupsPlayed) +
    " coups in " + mins + " minutes at this table, net " + cash(p.sessionNet, state.table) + ". Continue, or stop?";
  $("reality").dataset.check = String(num(p.checkNumber));
  $("reality").hidden = false;
}

function hideRealityCheck(n) {
  if (n === undefined || $("reality").dataset.check === String(num(n))) $("reality").hidden = true;
}

async function answerRealityCheck(answer) {
  const n = $("reality").dataset.check;
  const r = await tableAct("AnswerRealityCheck", { checkNumber: n, answer });
  if (r) hideRealityCheck(n);
}

// EVENT_WORDS are the words of the event log, by the payload's JSON
// name (chemmy.events.v1.TableEvent): for each, its line in English and
// in French (the game's own terms), from the payload p and m, an amount
// in major units of the event's currency. A test fails when a payload
// has no line in either language (TestConsoleDescribesEveryEvent).
// Server words (a turn, an action, a reason's enum) are named in both
// through WORDS; one the console does not know shows as sent.
const WORDS = {
  hand: { HAND_PLAYER: ["player", "ponte"], HAND_BANKER: ["banker", "banquier"], HAND_RIGHT: ["right", "droite"], HAND_LEFT: ["left", "gauche"], HAND_PUNTER: ["punter", "ponte"] },
  outcome: { OUTCOME_BANK_WINS: ["the bank wins", "la banque gagne"], OUTCOME_BANK_LOSES: ["the bank loses", "la banque perd"], OUTCOME_STAND_OFF: ["stand-off", "égalité"] },
  bankChange: { BANK_CHANGE_REASON_ACCEPTED: ["accepted", "acceptée"], BANK_CHANGE_REASON_HELD: ["held", "tenue"], BANK_CHANGE_REASON_PASSED: ["passed", "la main passe"],
    BANK_CHANGE_REASON_LOST: ["lost", "perdue"], BANK_CHANGE_REASON_RAISED: ["raised", "suivie"] },
  spot: { bank: ["bank", "banque"], player: ["player", "ponte"], tie: ["tie", "égalité"], bank_natural: ["bank natural", "naturel de la banque"],
    player_pair: ["player pair", "paire du ponte"], bank_pair: ["bank pair", "paire de la banque"], right: ["right", "le tableau de droite"], left: ["left", "le tableau de gauche"], cheval: ["à cheval", "à cheval"] },
  turn: { bet: ["bet", "mise"], decision: ["decision", "décision"], bank_offer: ["bank offer", "offre de la banque"], bank_auction: ["bank auction", "enchères de la banque"],
    banco_suivi: ["banco suivi", "banco suivi"], bank_raise: ["bank raise", "suite de la banque"], cut: ["move of top cards", "cartes passées dessous"] },
  action: { bet_declined: ["passes", "passe"], draw: ["carte (draws)", "carte"], stand: ["non (stands)", "non"], bank_offered_on: ["the bank is offered on", "la banque est offerte au suivant"],
    auction_closed: ["the auction is closed", "les enchères sont closes"], banco_left_standing: ["the banco is left standing", "le banco reste à prendre"],
    excess_bets_removed: ["the bets over the bank are removed", "les mises au-delà de la banque sont retirées"], no_move: ["no card moved", "aucune carte passée"],
    bank_kept: ["the bank is kept", "la banque est gardée"], void_coup: ["voids the coup", "annule le coup"], close_table: ["closes the table", "ferme la table"],
    stand_up: ["stands a player up", "fait lever un joueur"], certification_shoe: ["a certification shoe", "un sabot de certification"],
    limit_pass: ["the bank passes at its limit", "la main passe à la limite de la banque"], stood_up_inactive: ["stood up, inactive", "levé, inactif"],
    stood_up_reality_check: ["stood up after his reality check", "levé après son point de jeu"] },
  answer: { REALITY_CHECK_ANSWER_CONTINUE: ["continue", "continuer"], REALITY_CHECK_ANSWER_STOP: ["stop", "arrêter"] },
};
// word is a server word w of kind in language i (0 English, 1 French),
// or w as sent (underscores as spaces) when the console does not know it.
const word = (kind, w, i) => ((WORDS[kind] || {})[w] || [])[i] || String(w || "").replace(/_/g, " ").toLowerCase();
const listOr = (ids, none) => (ids || []).join(", ") || none;
const EVENT_WORDS = {
  tableCreated: [(p) => "table opened" + (p.createdBy ? " by " + p.createdBy : ""), (p) => "table ouverte" + (p.createdBy ? " par " + p.createdBy : "")],
  playerSeated: [(p) => p.playerId + " sits down at seat " + p.seatNumber, (p) => p.playerId + " s'assied à la place " + p.seatNumber],
  playerLeft: [(p) => p.playerId + " leaves seat " + p.seatNumber, (p) => p.playerId + " quitte la place " + p.seatNumber],
  galleryJoined: [(p) => p.playerId + " joins the gallery", (p) => p.playerId + " rejoint la galerie"],
  bankOffered: [(p, m) => p.playerId ? "the bank is offered to " + p.playerId : "the bank is open to any seated player at " + m(p.amount),
    (p, m) => p.playerId ? "la banque est offerte à " + p.playerId : "la banque revient à qui la prend à " + m(p.amount)],
  bankChanged: [(p, m) => (p.bankerPlayerId ? p.bankerPlayerId + " holds a bank of " + m(p.bank) : "no banker") + " (" + word("bankChange", p.reason, 0) + ")",
    (p, m) => (p.bankerPlayerId ? p.bankerPlayerId + " tient une banque de " + m(p.bank) : "pas de banquier") + " (" + word("bankChange", p.reason, 1) + ")"],
  bankAuctionOpened: [(p) => "the bank is auctioned (round " + (p.round || 1) + ")", (p) => "la banque est mise aux enchères (tour " + (p.round || 1) + ")"],
  bankBid: [(p, m) => num(p.amount) ? p.playerId + " bids " + m(p.amount) + " for the bank" : p.playerId + " will not bid",
    (p, m) => num(p.amount) ? p.playerId + " offre " + m(p.amount) + " pour la banque" : p.playerId + " ne surenchérit pas"],
  betPlaced: [(p, m) => p.playerId + " bets " + m(p.amount) + (p.spot ? " on " + word("spot", p.spot, 0) : ""),
    (p, m) => p.playerId + " ponte " + m(p.amount) + (p.spot ? " sur " + word("spot", p.spot, 1) : "")],
  betDeclined: [(p) => p.playerId + " passes", (p) => p.playerId + " passe"],
  betReduced: [(p, m) => p.playerId + "'s bet is cut to " + m(p.amount), (p, m) => "la mise de " + p.playerId + " est ramenée à " + m(p.amount)],
  bancoCalled: [(p, m) => p.playerId + ": banco! (" + m(p.amount) + ")", (p, m) => p.playerId + " : banco ! (" + m(p.amount) + ")"],
  cardDealt: [(p) => (p.holderPlayerId ? p.holderPlayerId + "'s " : "") + word("hand", p.hand, 0) + " hand, card " + p.position + ": " + cardText(p.card, 0),
    (p) => "main " + (p.hand === "HAND_BANKER" ? "du banquier" : p.hand === "HAND_RIGHT" ? "de droite" : p.hand === "HAND_LEFT" ? "de gauche" : "du ponte") +
      (p.holderPlayerId ? " (" + p.holderPlayerId + ")" : "") + ", carte " + p.position + " : " + cardText(p.card, 1)],
  naturalShown: [(p) => word("hand", p.hand, 0) + " shows a natural " + num(p.total), (p) => word("hand", p.hand, 1) + " : naturel " + num(p.total)],
  drawDecided: [(p) => word("hand", p.hand, 0) + (p.draw ? ": carte (draws)" : ": non (stands)"), (p) => word("hand", p.hand, 1) + (p.draw ? " : carte" : " : non")],
  coupResulted: [(p) => "result: " + (WORDS.outcome[p.outcome] ? word("outcome", p.outcome, 0) : (p.hands || []).map((h) => word("hand", h.hand, 0) + " " + word("outcome", h.outcome, 0)).join(", ")),
    (p) => "résultat : " + (WORDS.outcome[p.outcome] ? word("outcome", p.outcome, 1) : (p.hands || []).map((h) => word("hand", h.hand, 1) + " " + word("outcome", h.outcome, 1)).join(", "))],
  coupSettled: [(p, m) => "settled: banker net " + m(p.bankerNet) + ", commission " + m(p.commission) + (p.houseNet ? ", house net " + m(p.houseNet) : ""),
    (p, m) => "réglé : net du banquier " + m(p.bankerNet) + ", cagnotte " + m(p.commission) + (p.houseNet ? ", net de la maison " + m(p.houseNet) : "")],
  coupVoided: [(p) => "the coup is voided by " + (p.by || "the table") + ": " + (p.reason || ""), (p) => "le coup est annulé par " + (p.by || "la table") + " : " + (p.reason || "")],
  bettingReopened: [() => "no bet: the betting opens again", () => "aucune mise : les mises rouvrent"],
  bettingWindowStarted: [() => "the betting window is open", () => "faites vos jeux"],
  bettingClosed: [(p) => "no more bets (" + (p.betsCount || 0) + ")", (p) => "rien ne va plus (" + (p.betsCount || 0) + ")"],
  turnTimedOut: [(p) => (p.playerId || "the table") + "'s time ran out (" + word("turn", p.turn, 0) + "): " + word("action", p.action, 0),
    (p) => "temps écoulé pour " + (p.playerId || "la table") + " (" + word("turn", p.turn, 1) + ") : " + word("action", p.action, 1)],
  seatFeeCharged: [(p, m) => p.playerId + " pays seat time " + m(p.fee), (p, m) => p.playerId + " paie sa place " + m(p.fee)],
  staffAction: [(p) => p.actorId + ": " + word("action", p.action, 0) + (p.reason ? " (" + p.reason + ")" : ""), (p) => p.actorId + " : " + word("action", p.action, 1) + (p.reason ? " (" + p.reason + ")" : "")],
  tableClosed: [(p) => "the table is closed" + (p.abandoned ? " (abandoned)" : "") + (p.reason ? ": " + p.reason : ""),
    (p) => "la table est fermée" + (p.abandoned ? " (abandonnée)" : "") + (p.reason ? " : " + p.reason : "")],
  shoeChanged: [(p) => "a new shoe (number " + (p.shoeNumber || 1) + ")", (p) => "un nouveau sabot (numéro " + (p.shoeNumber || 1) + ")"],
  topCardsMoved: [(p) => p.bankerPlayerId + " moves " + (p.count || 0) + " cards from the top to the bottom", (p) => p.bankerPlayerId + " passe " + (p.count || 0) + " cartes du dessus dessous"],
  realityCheck: [(p, m) => "reality check " + num(p.checkNumber) + " for " + p.playerId + ": " + num(p.coupsPlayed) + " coups, net " + m(p.sessionNet),
    (p, m) => "point de jeu " + num(p.checkNumber) + " pour " + p.playerId + " : " + num(p.coupsPlayed) + " coups, net " + m(p.sessionNet)],
  realityCheckAnswered: [(p) => p.playerId + " answers reality check " + num(p.checkNumber) + ": " + word("answer", p.answer, 0),
    (p) => p.playerId + " répond au point de jeu " + num(p.checkNumber) + " : " + word("answer", p.answer, 1)],
  seedCommitted: [(p) => p.playerId + " commits a seed to the shoe", (p) => p.playerId + " engage une graine dans le sabot"],
  seedRevealed: [(p) => p.playerId + " reveals his seed", (p) => p.playerId + " révèle sa graine"],
  seedCommitmentsFixed: [(p) => "the seed commitments are fixed (" + listOr((p.seedCommitments || []).map((c) => c.playerId), "none") + "): reveal by " + clock(p.revealDeadline),
    (p) => "les engagements de graines sont arrêtés (" + listOr((p.seedCommitments || []).map((c) => c.playerId), "aucun") + ") : révélation avant " + clock(p.revealDeadline)],
  shoeAbandoned: [(p) => {
    const w = p.withheldPlayerIds || [];
    return "the shoe was abandoned: " + listOr(w, "a player") + (w.length > 1 ? " withheld their seeds" : " withheld a seed");
  }, (p) => {
    const w = p.withheldPlayerIds || [];
    return "le sabot est abandonné : " + listOr(w, "un joueur") + (w.length > 1 ? " ont retenu leurs graines" : " a retenu sa graine");
  }],
  shoeSeeded: [(p) => "the shoe is seeded " + ((p.playerIds || []).length ? "with the seeds of " + p.playerIds.join(", ") + (p.source === "cutter" ? " (the cut)" : "") :
      "with no player's seed (no player entropy)"),
    (p) => "le sabot est ensemencé " + ((p.playerIds || []).length ? "avec les graines de " + p.playerIds.join(", ") + (p.source === "cutter" ? " (la coupe)" : "") :
      "sans graine de joueur (aucune entropie des joueurs)")],
};

// describe is one line of the event log: the payload p of kind (its JSON
// name) in language lang ("en" or "fr"; the console's by default), its
// amounts in major units of exponent exp.
function describe(kind, p, exp, lang) {
  const m = (v) => money(v, exp, lang);
  const w = EVENT_WORDS[kind];
  if (w) return w[(lang || LANG) === "fr" ? 1 : 0](p || {}, m);
  return kind + " " + JSON.stringify(p);
}

async function refresh() {
  if (!state.tableId) return;
  try {
    const n = ++state.issued;
    const r = await call(T, "GetTable", { tableId: state.tableId });
    render(r.table, n);
  } catch (e) { showError(e); }
}

const suits = { C: "♣", D: "♦", H: "♥", S: "♠" };

function cards(el, list, before) {
  el.textContent = "";
  for (const [i, c] of (list || []).entries()) {
    const s = document.createElement("span");
    s.className = "card" + (i >= before ? " dealt" : "");
    if (c.faceDown) {
      s.classList.add("face-down"); s.dataset.faceDown = "true"; s.textContent = "?"; s.title = "face down";
    } else {
      s.dataset.code = c.code || "";
      s.textContent = cardText(c);
      if (/[DH]$/.test(c.code || "")) s.classList.add("red");
    }
    el.append(s);
  }
}

// handsOf: the hands of coup cp as this game lays them out, each with a
// key (data-hand), a label, its holder, cards, total and outcome.
function handsOf(t, cp) {
  const g = gameOf(t).key;
  const hands = cp.hands || [];
  const banker = { key: "banker", label: g === "pb" ? "Bank" : "Banker", holder: g === "pb" ? "" : cp.bankerPlayerId, cards: cp.bankerCards, total: cp.bankerTotal };
  if (g === "cf" || g === "pb") {
    return [{ key: "player", label: "Player", holder: g === "cf" ? cp.handHolderPlayerId : "", cards: cp.playerCards, total: cp.playerTotal }, banker];
  }
  const of = (h) => ({ key: g === "old" ? "punter-" + h.holderPlayerId : handName(h.hand), label: g === "old" ? "Punter" : handName(h.hand) === "right" ? "Right" : "Left",
    holder: h.holderPlayerId, cards: h.cards, total: h.total, outcome: h.outcome });
  return g === "old" ? [banker, ...hands.map(of)] : [...hands.map(of), banker];
}

function renderHands(t, cp) {
  const box = $("hands");
  box.textContent = "";
  for (const h of handsOf(t, cp)) {
    const div = document.createElement("div");
    div.className = "hand";
    div.dataset.hand = h.key;
    if (h.holder && h.holder === state.me) div.classList.add("mine");
    const title = document.createElement("h4");
    const list = h.cards || [];
    const whole = list.length && !list.some((c) => c.faceDown);
    title.textContent = tr(h.label) + (h.holder ? " · " + you(h.holder) : "") + (whole ? " (" + num(h.total) + ")" : "") +
      (h.outcome && h.outcome !== "OUTCOME_UNSPECIFIED" ? " — " + outcomeNames[h.outcome] : "");
    const c = document.createElement("div");
    c.className = "cards";
    // A card the page had not shown in this hand is dealt in place.
    const key = (cp.coupId || "") + "/" + h.key, before = (state.dealt || {})[key];
    cards(c, list, before === undefined ? list.length : before);
    state.dealt = Object.assign(state.dealt || {}, { [key]: list.length });
    div.append(title, c);
    box.append(div);
  }
}

// live: a coup with something on it (bets or cards); a coup just opened
// for betting shows the last coup's cards until it has.
function live(cp) {
  return cp && ((cp.bets || []).length || (cp.playerCards || []).length || (cp.bankerCards || []).length ||
    (cp.hands || []).some((h) => (h.cards || []).length));
}

function resultText(t, cp) {
  if (!cp) return "";
  if (cp.voided) return tr("Coup") + " " + (cp.number || "") + " " + tr("voided") + ": " + (cp.voidReason || "");
  const g = gameOf(t).key;
  let res = "";
  if (g === "pb" && cp.outcome && cp.outcome !== "OUTCOME_UNSPECIFIED") {
    res = tr("player") + " " + num(cp.playerTotal) + ", " + tr("bank") + " " + num(cp.bankerTotal) + ": " +
      tr({ OUTCOME_BANK_WINS: "bank wins", OUTCOME_BANK_LOSES: "player wins", OUTCOME_STAND_OFF: "tie" }[cp.outcome]) + (cp.natural ? " (" + tr("natural") + ")" : "") +
      (cp.playerPair ? ", " + tr("player pair") : "") + (cp.bankerPair ? ", " + tr("bank pair") : "") +
      (cp.settled ? ", " + tr("settled") + ": " + tr("house net") + " " + cash(cp.houseNet, t) + ", " + tr("commission") + " " + cash(cp.commission, t) : "");
  } else if (cp.outcome && cp.outcome !== "OUTCOME_UNSPECIFIED") {
    res = tr(lower(cp.outcome, "OUTCOME_")) + (cp.natural ? " (" + tr("natural") + ")" : "");
  } else {
    const decided = (cp.hands || []).filter((h) => h.outcome && h.outcome !== "OUTCOME_UNSPECIFIED");
    if (decided.length) res = decided.map((h) => (g === "old" ? h.holderPlayerId : handName(h.hand)) + ": " + tr(outcomeNames[h.outcome])).join("; ") + (cp.natural ? " (" + tr("natural") + ")" : "");
  }
  if (res && cp.settled && g !== "pb") res += ", " + tr("settled") + ": " + tr("commission") + " " + cash(cp.commission, t) + ", " + tr("banker net") + " " + cash(cp.bankerNet, t);
  return res ? tr("Coup") + " " + (cp.number || "") + ": " + res : "";
}

function betText(t, b) {
  const g = gameOf(t).key;
  let s = you(b.playerId) + " " + cash(b.amount, t);
  if (b.banco) s += " banco";
  if (g === "pb") s += " on " + lower(b.spot, "BET_SPOT_");
  if (g === "banque") s += " " + (b.side === "BANQUE_SIDE_CHEVAL" ? "à cheval" : lower(b.side, "BANQUE_SIDE_"));
  if (num(b.won)) s += " → won " + cash(b.won, t) + (num(b.commission) ? " less " + cash(b.commission, t) : "");
  if (num(b.lost)) s += " → lost " + cash(b.lost, t);
  return s;
}

// turnOf says who the table waits for and what for.
function turnOf(t) {
  const g = gameOf(t).key, cp = t.coup || {}, st = t.state || "";
  const decision = () => ({ who: cp.decisionPlayerId, what: tf("draw or stand ({0} hand)", tr(handName(cp.decisionHand || (g === "old" && cp.decisionPlayerId === t.bankerPlayerId ? "HAND_BANKER" : "HAND_PUNTER")))) });
  switch (st) {
    case "TABLE_STATE_WAITING_FOR_PLAYERS": return { who: "", what: tr(g === "old" ? "three players to sit down" : "players to sit down") };
    case "TABLE_STATE_OFFERING_BANK":
      if (num(t.openOfferAmount)) return { who: "", what: tf("any seated player to take the bank at {0}", cash(t.openOfferAmount, t)) };
      return { who: t.offeredPlayerId, what: tr(g === "old" ? "take the bank (a baccarat) or decline" : "take the bank or decline") };
    case "TABLE_STATE_AUCTION": return { who: "", what: tr("bids for the bank") + (num(t.highestBid) ? " (highest " + cash(t.highestBid, t) + " by " + t.highestBidderPlayerId + ")" : "") };
    case "TABLE_STATE_BETTING":
      if (g === "pb") return { who: "", what: tr("bets on the layout") };
      if (g === "old") return { who: "", what: tf("punters' stakes against {0}", t.bankerPlayerId || tr("the bank")) };
      return { who: cp.turnPlayerId, what: g === "cf" ? tf("bet, banco or pass ({0} uncovered)", cash(cp.uncovered, t)) : tr("bet on a side, or pass") };
    case "TABLE_STATE_DECISION": return decision();
    case "TABLE_STATE_BANK_RAISE": return { who: t.bankerPlayerId, what: tr("raise the bank or not") };
    case "TABLE_STATE_DEALING":
      if (g === "old" && t.turnDeadline) return { who: t.bankerPlayerId, what: tf("announce a move of top cards (0..{0})", num(rulesOf(t).maxMoveTop)) };
      return { who: "", what: tr("the deal") };
    case "TABLE_STATE_SETTLING": return { who: "", what: tr("the settlement") };
    case "TABLE_STATE_RESULT": return { who: "", what: tr("the next coup (result shown)") };
    case "TABLE_STATE_CLOSED": return { who: "", what: tr("nothing: the table is closed") };
  }
  return { who: "", what: "" };
}

// visibility shows the elements of this viewer's role (.player-only,
// .staff-only) and, of the table's controls (#actions), only those he may
// use now (allowed).
function visibility() {
  for (const el of document.querySelectorAll(".player-only, .staff-only")) {
    el.hidden = (el.classList.contains("player-only") && !isPlayer()) || (el.classList.contains("staff-only") && !isStaff());
  }
  const ok = allowed(state.table);
  const key = state.table ? gameOf(state.table).key : "";
  const show = {
    side: ok.has("sit") && key === "banque",
    "bank-amount-label": ok.has("accept-bank") || ok.has("bid-bank"),
    "bet-amount-label": ok.has("bet") || ok.has("spots"),
    "bet-side": ok.has("bet") && key === "banque",
    "over-bank-label": ok.has("bet") && key === "cf",
    "move-count": ok.has("move-top"),
    "advice-text": ok.has("draw"),
    reason: ok.has("void") || ok.has("close"),
  };
  for (const id of ACTIONS) $(id).hidden = !ok.has(id);
  for (const [id, on] of Object.entries(show)) $(id).hidden = !on;
  for (const row of document.querySelectorAll("#actions .row")) {
    row.hidden = false;
    row.hidden = ![...row.querySelectorAll("button")].some((b) => !b.closest("[hidden]"));
  }
  const none = $("no-action");
  none.textContent = state.table && !ok.size && (isPlayer() || isStaff()) ? tr("Nothing for you to do now.") : "";
  none.hidden = !none.textContent;
}

// ACTIONS are the controls of #actions that ask the table for something
// (spots: the punto banco layout's bet buttons).
const ACTIONS = ["sit", "gallery-join", "leave", "accept-bank", "bid-bank", "decline-bank", "pass-bank", "raise-bank", "keep-bank",
  "bet", "spots", "banco", "decline-bet", "move-top", "draw", "stand", "void", "close"];

// IN_PLAY: the states of a coup being dealt, decided or settled.
const IN_PLAY = ["TABLE_STATE_DEALING", "TABLE_STATE_DECISION", "TABLE_STATE_SETTLING", "TABLE_STATE_BANK_RAISE"];

// seatFree: table t has a seat the viewer could take (a side with room
// at baccarat banque; any seat when the rules give no number).
function seatFree(t) {
  const r = rulesOf(t), seats = t.seats || [];
  if (gameOf(t).key === "banque") {
    const per = num(r.maxSeatsPerSide);
    return !per || ["BANQUE_SIDE_RIGHT", "BANQUE_SIDE_LEFT"].some((side) => seats.filter((s) => s.side === side).length < per);
  }
  return !num(r.maxSeats) || seats.length < num(r.maxSeats);
}

// allowed is the set of ACTIONS the viewer may take at table t now, by
// its game, his role and part at the table and the table's state, as the
// table's rules allow them (TableService: JoinTable, AcceptBank, ...): a
// croupier voids a coup with something on it and closes a table between
// coups; a player sits or joins the gallery when he is not at the table,
// leaves between coups with nothing at stake, takes or declines the bank
// offered to him, bids in an auction, raises or passes his bank, bets in
// his turn (any time in the betting at punto banco and, for a punter,
// the old game), draws or stands at his decision, moves the top cards
// when the old game's banker is due to.
function allowed(t) {
  const out = new Set();
  if (!t || !t.state || t.state === "TABLE_STATE_CLOSED") return out;
  const g = gameOf(t).key, st = t.state, cp = t.coup || {}, bets = cp.bets || [], me = state.me;
  if (isStaff()) {
    if (cp.coupId && !cp.settled && !cp.voided && live(cp) && !["TABLE_STATE_SETTLING", "TABLE_STATE_RESULT"].includes(st)) out.add("void");
    if (["TABLE_STATE_WAITING_FOR_PLAYERS", "TABLE_STATE_OFFERING_BANK", "TABLE_STATE_AUCTION"].includes(st) ||
        (st === "TABLE_STATE_BETTING" && !bets.length)) out.add("close");
    return out;
  }
  if (!isPlayer() || !me) return out;
  const seated = (t.seats || []).some((s) => s.playerId === me), gallery = (t.galleryPlayerIds || []).includes(me);
  const banker = t.bankerPlayerId === me, staked = bets.some((b) => b.playerId === me);
  const highest = st === "TABLE_STATE_AUCTION" && t.highestBidderPlayerId === me;
  const passable = g !== "old" && g !== "pb" && st === "TABLE_STATE_BETTING" && !bets.length; // the banker may pass the bank
  if (!seated && !gallery && seatFree(t)) out.add("sit");
  if (g === "cf" && !seated && !gallery) out.add("gallery-join");
  if ((gallery && !staked) || (seated && !staked && !IN_PLAY.includes(st) && !highest && (!banker || passable))) out.add("leave");
  switch (st) {
    case "TABLE_STATE_OFFERING_BANK":
      if (t.offeredPlayerId === me) out.add("accept-bank").add("decline-bank");
      else if (num(t.openOfferAmount) && seated) out.add("accept-bank");
      break;
    case "TABLE_STATE_AUCTION":
      if (seated) { out.add("bid-bank"); if (!highest) out.add("decline-bank"); }
      break;
    case "TABLE_STATE_BANK_RAISE":
      if (banker) out.add("raise-bank").add("keep-bank");
      break;
    case "TABLE_STATE_BETTING":
      if (g === "pb") out.add("spots");
      else if (banker) { if (passable) out.add("pass-bank"); }
      else if (g === "old") { if (seated && !staked) out.add("bet").add("decline-bet"); }
      else if (cp.turnPlayerId === me) out.add("bet").add("banco").add("decline-bet");
      else if (g === "cf" && t.bancoSuiviPlayerId === me && !bets.length) out.add("banco");
      break;
    case "TABLE_STATE_DECISION":
      if (cp.decisionPlayerId === me) out.add("draw").add("stand");
      break;
    case "TABLE_STATE_DEALING":
      if (g === "old" && banker && t.turnDeadline) out.add("move-top");
      break;
  }
  return out;
}

// spots makes the punto banco bet buttons for the spots this table offers.
function spots(t) {
  const r = rulesOf(t), box = $("spots");
  const want = JSON.stringify([r.bankNaturalBetOff, r.pairBets, r.tiePays, r.pairPays, r.bankNaturalPays]);
  if (state.spotsFor === want) return;
  state.spotsFor = want;
  box.textContent = "";
  const offered = [["BANK", "Bank"], ["PLAYER", "Player"], ["TIE", "Tie " + num(r.tiePays) + ":1"]];
  if (!r.bankNaturalBetOff) offered.push(["BANK_NATURAL", "Bank natural " + num(r.bankNaturalPays) + ":1"]);
  if (r.pairBets) offered.push(["PLAYER_PAIR", "Player pair " + num(r.pairPays) + ":1"], ["BANK_PAIR", "Bank pair " + num(r.pairPays) + ":1"]);
  for (const [spot, label] of offered) {
    const b = document.createElement("button");
    b.type = "button"; b.id = "spot-" + spot; b.textContent = label; b.dataset.spot = spot;
    b.addEventListener("click", () => amountAct("PlaceBet", "bet-amount", { spot: "BET_SPOT_" + spot }));
    box.append(b);
  }
}

// render shows t, the table in an answer to the call issued n-th
// (state.issued; none for WatchTable's first message). Answers can arrive
// out of order (a GetTable sent before a commitment, answered after the
// commitment's own answer): a view of an older event, or of the same
// event from an earlier call, is not shown over a newer one.
function render(t, n) {
  if (!t || t.tableId !== state.tableId) return;
  const cur = state.table && state.table.tableId === t.tableId ? state.table : null;
  if (cur) {
    const a = num(t.eventSequence), b = num(cur.eventSequence);
    if (a < b || (a === b && n !== undefined && n < (state.shownIssued || 0))) return;
  } else state.shownIssued = 0;
  if (n !== undefined) state.shownIssued = Math.max(state.shownIssued || 0, n);
  state.table = t;
  const g = gameOf(t), cp = t.coup || null;
  const shown = shownCoup(t);
  amountDefaults(t);
  visibility();
  updateLobbyRow(t);
  $("game-name").textContent = tr(g.name);
  $("game-name").dataset.game = g.key;
  $("state").textContent = tr(lower(t.state, "TABLE_STATE_"));
  $("state").dataset.state = t.state || "";
  $("banker").textContent = g.key === "pb" || (g.key === "banque" && rulesOf(t).houseBank) ? "the house" : you(t.bankerPlayerId) || "—";
  $("bank").textContent = g.key === "pb" ? "—" : cashCode(t.bank, t) + (num(t.bankSetAside) ? " (" + cash(t.bankSetAside, t) + " set aside)" : "");
  $("offered").textContent = you(t.offeredPlayerId) || (num(t.highestBid) ? "highest bid " + cash(t.highestBid, t) + " by " + you(t.highestBidderPlayerId) : "—");
  $("stakes").textContent = stakesText(t) + " · " + tr("seats") + " " + seatsText(t);
  $("shoe").textContent = tf("shoe {0}, {1} coups played", t.shoeNumber || 1, num(t.coupsPlayed)) + (t.certification ? " (" + tr("certification shoe") + ")" : "");

  const turn = turnOf(t);
  $("turn").textContent = turn.who ? you(turn.who) + ": " + turn.what : turn.what || "—";
  $("turn").dataset.player = turn.who || "";
  const mine = !!turn.who && turn.who === state.me;
  $("prompt").textContent = mine ? tf("Your turn: {0}.", turn.what) : "";
  $("prompt").classList.toggle("mine", mine);

  const seats = $("seats"); seats.textContent = "";
  const all = t.seats || [];
  for (const [i, s] of all.entries()) {
    const li = document.createElement("li");
    const marks = [];
    if (s.playerId === t.bankerPlayerId) marks.push("banker");
    if (s.side && s.side !== "BANQUE_SIDE_UNSPECIFIED") marks.push(lower(s.side, "BANQUE_SIDE_") + " side");
    if (s.playerId === t.rightHandPlayerId) marks.push("plays the right hand");
    if (s.playerId === t.leftHandPlayerId) marks.push("plays the left hand");
    li.textContent = tr("seat") + " " + s.number + ": " + you(s.playerId) + (marks.length ? " (" + marks.map(tr).join(", ") + ")" : "");
    li.dataset.player = s.playerId;
    if (s.playerId === state.me) li.className = "me";
    if (s.playerId === t.bankerPlayerId) li.classList.add("banker");
    // Round the table: the seats in order along the lower arc of the
    // felt, from its left end to its right (the bank is in the middle).
    const a = Math.PI * (all.length > 1 ? 0.12 + 0.76 * i / (all.length - 1) : 0.5);
    li.style.left = (50 - 38 * Math.cos(a)).toFixed(1) + "%";
    li.style.top = (52 + 40 * Math.sin(a)).toFixed(1) + "%";
    seats.append(li);
  }
  $("gallery").textContent = (t.galleryPlayerIds || []).length ? tr("Gallery") + ": " + t.galleryPlayerIds.map(you).join(", ") : "";
  const chip = $("bank-chip");
  chip.hidden = g.key === "pb" || !num(t.bank);
  chip.textContent = chip.hidden ? "" : tr("Bank") + " " + cashCode(t.bank, t) + (t.bankerPlayerId ? " · " + you(t.bankerPlayerId) : "");

  $("coup-label").textContent = shown.number ? "· coup " + shown.number + (shown === cp ? "" : " (last)") : "";
  const bets = $("bets"); bets.textContent = "";
  for (const b of shown.bets || []) {
    const li = document.createElement("li");
    li.textContent = betText(t, b);
    li.dataset.player = b.playerId;
    if (b.spot) li.dataset.spot = short(b.spot, "BET_SPOT_");
    bets.append(li);
  }
  renderHands(t, shown);
  const dec = state.decisions[shown.coupId] || [];
  $("decisions").textContent = dec.length ? "Decisions: " + dec.map((d) => handName(d.hand) + " " + (d.draw ? "carte" : "non")).join(", ") : "";

  $("result").textContent = resultText(t, shown);
  $("result").dataset.outcome = shown.outcome || ((shown.hands || []).some((h) => h.outcome) ? "HANDS" : "");
  $("result").dataset.settled = shown.settled ? "true" : "";
  $("last-result").textContent = shown === cp && t.lastCoup ? "Last " + resultText(t, t.lastCoup).replace(/^Coup/, "coup") : "";

  $("roads").hidden = false;
  if (g.key === "pb") { spots(t); ChemmyRoads.draw($("roads"), t.roads); } else { noteBead(t.lastCoup); drawBeads(); }
  visibility(); // again: the spots are made

  const voidable = cp && cp.coupId && !cp.settled;
  $("void").textContent = voidable ? "Void coup " + cp.number : "Void the coup";
  $("void").dataset.coup = voidable ? cp.coupId : "";
  advise(t);
  renderFair(t);
  seedsFor(t, true);
  tick();
  const key = [t.tableId, t.lastCoup && t.lastCoup.coupId, t.lastCoup && t.lastCoup.settled, t.lastCoup && t.lastCoup.voided, t.bankerPlayerId, t.bank,
    t.highestBid, cp && cp.coupId, cp && (cp.bets || []).length].join("|");
  if (key !== state.moneyKey) { state.moneyKey = key; refreshBalance(); loadHistory(); }
  renderMine(t, shown);
}

// ---- History (ListRounds). On opening a table, and after each coup,
// a player is shown his own last rounds (at any table: a player may list
// only his own), staff the table's last rounds; the player's result in
// the coup shown is told to him from his side ("you lost 10.00"), from
// his round's net (the settlement's transfers, commission included).
const HISTORY_SIZE = 10;

async function loadHistory() {
  const id = state.tableId;
  if (!id || !state.me || !(isPlayer() || isStaff())) return;
  const n = state.historyRead = (state.historyRead || 0) + 1;
  let rounds;
  try {
    const req = isPlayer() ? { playerId: state.me, pageSize: HISTORY_SIZE } : { tableId: id, pageSize: HISTORY_SIZE };
    rounds = (await call(T, "ListRounds", req)).rounds || [];
  } catch (e) {
    if (n === state.historyRead && state.tableId === id) $("history-note").textContent = explain(e);
    return;
  }
  if (n !== state.historyRead || state.tableId !== id) return;
  state.rounds = rounds;
  for (const r of rounds) if (r.tableId === id) noteBead({ number: r.number, voided: r.state === "ROUND_STATE_VOIDED", outcome: r.outcome, settled: r.state === "ROUND_STATE_SETTLED" });
  if (state.table && gameOf(state.table).key !== "pb") drawBeads();
  renderHistory(rounds);
  if (state.table) renderMine(state.table, shownCoup(state.table));
}

const roundMoney = (v, r) => money(v, r.currencyExponent !== undefined ? r.currencyExponent : expOf(r.currencyCode || "")) + (r.currencyCode ? " " + r.currencyCode : "");
// shortId: the end of an id (a ULID's random part: tables opened at
// the same time differ there).
const shortId = (id) => String(id || "").slice(-6);

// ownResult is a player's round from his side: "you won 4.75 EUR", "you
// lost 5.00 EUR", "your stake back", "voided", "in play".
function ownResult(r) {
  const me = (r.players || []).find((p) => p.playerId === state.me) || {};
  if (r.state === "ROUND_STATE_VOIDED") return tr("voided: your stake is returned");
  if (r.state !== "ROUND_STATE_SETTLED") return tr("in play");
  const net = BigInt(String(me.net || 0));
  const as = me.banker ? " " + tr("as the banker") : "";
  if (net > 0n) return tf("you won {0}", roundMoney(net, r)) + as;
  if (net < 0n) return tf("you lost {0}", roundMoney(-net, r)) + as;
  return tr("no money moved: your stake is returned") + as;
}

// feeKinds: the fee a fee round (round id "fee-<wallet request id>",
// number 0: no coup) charged, by the end of its request id: a seat fee
// (hourly_fee, "table/<table>/fee/<n>"), a bank auction's fee (BQ-BANK,
// "table/<table>/<auction>/fee"), else (an id too long, sent hashed) a fee.
const feeKinds = [[/\/fee\/\d+$/, "seat fee"], [/\/fee$/, "bank auction fee"], [/$/, "fee"]];

// roundText is a round of the history in words, after its game and
// table: a coup's ("coup 2: you lost 3.00 EUR"; staff: "coup 2: the bank
// wins, bank net 2.85 EUR, commission 0.15 EUR"), or a fee's ("seat fee:
// 2.00 EUR", "seat fee: not charged", "seat fee: in play").
function roundText(r) {
  const id = String(r.coupId || "");
  if (id.startsWith("fee-")) {
    const kind = feeKinds.find(([re]) => re.test(id))[1];
    let what = tr("in play");
    if (r.state === "ROUND_STATE_SETTLED") what = roundMoney(r.commission, r);
    else if (r.state === "ROUND_STATE_CANCELLED" || r.state === "ROUND_STATE_VOIDED") what = tr("not charged");
    return tf("{0}: {1}", tr(kind), what);
  }
  let text = tr("coup") + " " + (r.number || "?") + ": ";
  if (isPlayer()) text += ownResult(r);
  else if (r.state === "ROUND_STATE_VOIDED") text += tr("voided");
  else if (r.state !== "ROUND_STATE_SETTLED") text += tr("in play");
  else text += tr(roundOutcomes[r.outcome] || "settled") + ", " + tr("bank net") + " " + roundMoney(r.bankNet, r) + (num(r.commission) ? ", " + tr("commission") + " " + roundMoney(r.commission, r) : "");
  return text;
}

const roundOutcomes = { OUTCOME_BANK_WINS: "the bank wins", OUTCOME_BANK_LOSES: "the bank loses", OUTCOME_STAND_OFF: "stand-off" };

function renderHistory(rounds) {
  const list = $("history-list");
  list.textContent = "";
  $("history-title").textContent = isPlayer() ? tr("Your last rounds") : tr("This table's last rounds");
  $("history-note").textContent = rounds.length ? "" : isPlayer() ? tr("You have played no round yet.") : tr("No round at this table yet.");
  for (const r of rounds) {
    const li = document.createElement("li");
    const game = (GAMES[r.variant] || GAMES.VARIANT_CHEMIN_DE_FER);
    const here = r.tableId === state.tableId;
    li.textContent = tr(game.name) + " · " + (here ? tr("this table") : tr("table") + " " + shortId(r.tableId)) + " · " + roundText(r);
    li.dataset.coup = r.coupId || "";
    li.dataset.table = r.tableId || "";
    li.dataset.state = r.state || "";
    if (isPlayer()) li.dataset.net = String(((r.players || []).find((p) => p.playerId === state.me) || {}).net || 0);
    if (here) li.classList.add("here");
    list.append(li);
  }
}

// noteBead keeps a settled coup's bead for the bead plate of a game
// without the table's roads: by coup number, its winner from the bank's
// side (a game of several hands: the bank won them all, lost them all,
// or neither).
function noteBead(cp) {
  if (!cp || !cp.number || !cp.settled || cp.voided) return;
  const winner = coupWinner(cp);
  if (winner) (state.beads = state.beads || {})[cp.number] = winner;
}

// coupWinner: a settled coup's road winner from the bank's side
// ("ROAD_WINNER_BANK", ...; "" when undecided): its outcome, or at a game
// of several hands the bank won them all, lost them all, or neither (as
// table-svc's Table.recent_results).
function coupWinner(cp) {
  let o = cp.outcome;
  if (!o || o === "OUTCOME_UNSPECIFIED") {
    const outs = (cp.hands || []).map((h) => h.outcome).filter((x) => x && x !== "OUTCOME_UNSPECIFIED");
    o = outs.length && outs.every((x) => x === outs[0]) ? outs[0] : outs.length ? "OUTCOME_STAND_OFF" : "";
  }
  return { OUTCOME_BANK_WINS: "ROAD_WINNER_BANK", OUTCOME_BANK_LOSES: "ROAD_WINNER_PLAYER", OUTCOME_STAND_OFF: "ROAD_WINNER_TIE" }[o] || "";
}

function drawBeads() {
  const beads = Object.entries(state.beads || {}).map(([n, winner]) => ({ number: Number(n), winner })).sort((a, b) => a.number - b.number);
  ChemmyRoads.drawBeads($("roads"), beads, tr("Roads") + " (" + tr("this table's coups") + ")");
}

// showRecent shows table t's last finished coups (recent, newest first,
// as WatchTable's first message gives them: Table.recent_coups), whoever
// the viewer is, a gallery viewer's too: each in the bead plate (a game
// without the table's roads) and in the list of the table's last coups,
// its result and its cards as they lay at its end.
function showRecent(t, recent) {
  const list = $("recent-list");
  list.textContent = "";
  for (const cp of recent) {
    noteBead(cp);
    const li = document.createElement("li");
    const hands = handsOf(t, cp).filter((h) => (h.cards || []).length).map((h) => {
      const whole = !h.cards.some((c) => c.faceDown);
      return tr(h.label) + (h.holder ? " · " + h.holder : "") + " " + h.cards.map((c) => cardText(c)).join(" ") + (whole ? " (" + num(h.total) + ")" : "");
    });
    li.textContent = (resultText(t, cp) || tr("Coup") + " " + (cp.number || "")) + (hands.length ? " · " + hands.join(" · ") : "");
    li.dataset.coup = cp.coupId || "";
    li.dataset.number = String(cp.number || "");
    list.append(li);
  }
  $("recent").hidden = !recent.length;
  if (gameOf(t).key !== "pb") drawBeads();
}

// shownCoup is the coup the table view shows: the one in play once
// something is on it, else the last one.
function shownCoup(t) {
  const cp = t.coup || null;
  return live(cp) ? cp : (t.lastCoup || cp || {});
}

// renderMine tells the player his result in coup cp, once it is over
// and his round is read (loadHistory).
function renderMine(t, cp) {
  const el = $("my-result");
  const r = isPlayer() && cp && cp.coupId && (state.rounds || []).find((x) => x.coupId === cp.coupId && (x.players || []).some((p) => p.playerId === state.me));
  const over = r && (r.state === "ROUND_STATE_SETTLED" || r.state === "ROUND_STATE_VOIDED");
  el.textContent = over ? tr("Coup") + " " + (cp.number || r.number || "") + ": " + ownResult(r) + "." : "";
  el.dataset.net = over ? String(((r.players || []).find((p) => p.playerId === state.me) || {}).net || 0) : "";
  el.dataset.coup = over ? cp.coupId : "";
}

// advise asks for the croupier's advice (GetAdvice) once per decision that
// is the viewer's, and shows it; a game without advice shows none.
async function advise(t) {
  const cp = t.coup || {}, box = $("advice-text");
  const mine = t.state === "TABLE_STATE_DECISION" && cp.decisionPlayerId === state.me && isPlayer();
  const key = mine ? cp.coupId + "/" + (cp.decisionHand || "") : "";
  if (key === state.advised) return;
  state.advised = key;
  box.textContent = ""; box.dataset.reason = "";
  if (!mine) return;
  try {
    const r = await call(T, "GetAdvice", { tableId: t.tableId, playerId: state.me });
    if (state.advised !== key) return;
    const ev = (v) => Number(v || 0).toFixed(4);
    box.textContent = "Croupier's advice (" + (r.rule || "") + "): " + lower(r.best, "DRAW_CHOICE_") + " — draw EV " + ev(r.drawEv) + ", stand EV " + ev(r.standEv);
    box.dataset.best = r.best || "";
  } catch (e) {
    if (state.advised !== key) return;
    box.dataset.reason = e.reason || "";
    if (e.reason !== "WRONG_VARIANT") box.textContent = explain(e);
  }
}

// ---- Player seeds (docs/guide-fairness.md; TableService "Player
// seeds"). The console takes the player's part for him: while the
// table's shoe collects it commits SHA-256 of a fresh secret seed
// (CommitSeed), and once the commitments are fixed it reveals the seed
// (RevealSeed), then shows him that his seed is in the shoe and how to
// check it (chemmy verify). The seed is kept in localStorage under
// "chemmy-seed/<table id>/<shoe id>/<player id>" (a JSON record: seed,
// commitment and the shoe's server commitment in hex, revealed, inShoe,
// done), written before the commitment is sent, so a reload before the
// reveal still has it.
//
// A committed seed that is not revealed in time abandons the shoe and
// bars the player from seeds at that table. So the console commits only
// for a player who takes part at the table (seated, in the gallery, or
// with a bet in the coup), not for every table he looks at; and while it
// is open it reveals his seeds at every table, not just the open one
// (revealElsewhere). A console closed before the reveal reveals nothing.
// Each step is tried once per shoe; a refusal (SEEDS_FULL,
// SEEDS_NOT_COLLECTING, ...) is shown in words in the "Fair shoe" line,
// and only a failure to reach the service is tried again, a few times.
const SEED_PREFIX = "chemmy-seed/";
const SEED_KEEP_MS = 30 * 24 * 3600 * 1000; // a record is kept 30 days (to check the shoe once closed)
const seedKey = (tableId, shoeId, player) => SEED_PREFIX + tableId + "/" + shoeId + "/" + player;

function storedSeed(key) {
  try { return JSON.parse(localStorage.getItem(key) || "null"); } catch (e) { return null; }
}

function storeSeed(key, rec) {
  try { localStorage.setItem(key, JSON.stringify(rec)); return storedSeed(key) !== null; } catch (e) { return false; }
}

// updateSeed sets fields of a kept record as it stands now (another
// render, or another tab, may have changed it since it was read).
function updateSeed(key, fields) {
  const rec = storedSeed(key);
  if (rec) storeSeed(key, Object.assign(rec, fields));
}

// ownSeeds are the signed-in player's seed records: [key, record].
function ownSeeds() {
  const out = [];
  try {
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i);
      if (!key || !key.startsWith(SEED_PREFIX)) continue;
      const rec = storedSeed(key);
      if (rec && rec.player === state.me) out.push([key, rec]);
    }
  } catch (e) { /* no storage: no records */ }
  return out;
}

function pruneSeeds() {
  try {
    const old = [];
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i);
      const rec = key && key.startsWith(SEED_PREFIX) ? storedSeed(key) : null;
      if (key && key.startsWith(SEED_PREFIX) && (!rec || Date.now() - num(rec.at) > SEED_KEEP_MS)) old.push(key);
    }
    for (const key of old) localStorage.removeItem(key);
  } catch (e) { /* no storage */ }
}

// takesPart: the viewer plays at table t (a seat, the gallery, or a bet
// in the coup: punto banco bets from behind).
function takesPart(t) {
  const cp = t.coup || {};
  return (t.seats || []).some((s) => s.playerId === state.me) || (t.galleryPlayerIds || []).includes(state.me) ||
    (cp.bets || []).some((b) => b.playerId === state.me);
}

// transient: a failure to reach the service, worth trying again.
const transient = (e) => ["unavailable", "deadline_exceeded", "aborted"].includes(e.code) ||
  ["RATE_LIMITED", "BACKEND_UNAVAILABLE", "DEPENDENCY_UNAVAILABLE", "REQUEST_ABANDONED"].includes(e.reason);

// seedNote records what went wrong with the player's seed at a table (or
// clears it) and shows it: in the open table's "Fair shoe" line, or for
// another table in the error box, naming it.
function seedNote(key, text, e) {
  if (text) state.seedNotes[key] = { text, reason: (e && e.reason) || "" }; else delete state.seedNotes[key];
  if (state.table && key === seedKey(state.table.tableId, state.table.shoeId, state.me)) renderFair(state.table);
  else if (text) showError(new CallError((e && e.code) || "", tf("At table {0}: {1}", (storedSeed(key) || {}).tableId || "?", text), "", ""));
}

// again lets a step that failed to reach the service be tried once more
// (at most tries calls of that step per shoe), after 2 s, by reading the
// table again.
function again(key, flags, tries, tableId) {
  const n = (flags === state.seedTried ? "commit " : "reveal ") + key;
  state.seedTries[n] = (state.seedTries[n] || 0) + 1;
  if (state.seedTries[n] >= tries) return;
  setTimeout(() => {
    delete flags[key];
    if (state.tableId === tableId) refresh();
  }, 2000);
}

// seedsFor moves the player's part of the seed protocol on at table t
// (as the table stands): it records a shoe seeded or given up, commits
// (only when commit: the open table) and reveals.
async function seedsFor(t, commit) {
  if (!isPlayer() || !t || !t.shoeId || !state.me) return;
  const e = t.shoeEntropy || {}, me = state.me;
  const key = seedKey(t.tableId, t.shoeId, me);
  for (const [k, rec] of ownSeeds()) { // this table's earlier shoes are over
    if (!rec.done && rec.tableId === t.tableId && rec.shoeId !== t.shoeId) updateSeed(k, { done: true });
  }
  const rec = storedSeed(key);
  if (rec && !rec.done && (e.seeded || (!e.collecting && !e.revealing))) {
    updateSeed(key, { done: true, inShoe: !!e.seeded && (e.playerIds || []).includes(me) });
  }
  const mine = (e.commitments || []).find((c) => c.playerId === me);
  if (e.collecting && !mine && commit && !(e.withheldPlayerIds || []).includes(me) && takesPart(t)) await commitSeed(t, key);
  else if (e.revealing && mine && !(e.revealedPlayerIds || []).includes(me)) await revealSeed(t, key, ChemmyFair.hexOfBase64(mine.commitment));
}

// commitSeed commits the player to a fresh seed for t's shoe (or to the
// one kept for it, after a reload): once per shoe.
async function commitSeed(t, key) {
  if (state.seedTried[key]) return;
  state.seedTried[key] = true;
  let rec = storedSeed(key);
  if (rec && rec.refused) return; // refused already (shown when it was)
  if (!rec) {
    if (!ChemmyFair.canSeed()) { seedNote(key, tr("This browser gives no secure random numbers: the console commits no seed of yours.")); return; }
    const seed = ChemmyFair.freshSeed();
    rec = { seed, commitment: await ChemmyFair.commitmentOf(seed), serverCommitment: ChemmyFair.hexOfBase64((t.shoeEntropy || {}).commitment),
      tableId: t.tableId, shoeId: t.shoeId, shoeNumber: t.shoeNumber || 1, player: state.me, at: Date.now() };
    // Another tab of his may have kept a seed for this shoe meanwhile:
    // that one is committed (again: the same commitment is taken as the
    // first), never overwritten.
    const kept = storedSeed(key);
    if (kept) rec = kept;
    else if (!storeSeed(key, rec)) {
      seedNote(key, tr("This browser keeps no local storage: the console commits no seed of yours (a reload would lose it before the reveal)."));
      return;
    }
  }
  try {
    const n = ++state.issued;
    const r = await call(T, "CommitSeed", { requestId: rid(), tableId: t.tableId, playerId: state.me,
      commitment: ChemmyFair.base64(ChemmyFair.fromHex(rec.commitment)) });
    seedNote(key, "");
    if (r && r.table) render(r.table, n);
  } catch (e) {
    seedNote(key, tf("Your seed was not committed: {0}", explain(e)), e);
    if (transient(e)) { again(key, state.seedTried, 3, t.tableId); return; }
    // SEED_ALREADY_COMMITTED: his commitment is another's (made elsewhere);
    // the reveal says so. Any other refusal ends this shoe's commitment.
    if (e.reason !== "SEED_ALREADY_COMMITTED") updateSeed(key, { refused: e.reason || e.code, done: true });
  }
}

// revealSeed reveals the player's kept seed for t's shoe, committed as
// commitment (hex). A seed this browser does not have, or one that does
// not hash to his commitment, is not sent: he is told to reveal his own.
async function revealSeed(t, key, commitment) {
  if (state.seedRevealTried[key]) return;
  state.seedRevealTried[key] = true;
  const rec = storedSeed(key);
  const by = tf(" Reveal its seed yourself (RevealSeed) by {0}, or the shoe is abandoned and this table takes no seed of yours again.",
    clock((t.shoeEntropy || {}).revealDeadline));
  if (!rec || !rec.seed) { seedNote(key, tf("Your commitment {0}… was not made in this browser.", commitment.slice(0, 8)) + by); return; }
  if (rec.commitment !== commitment) { seedNote(key, tf("Your commitment {0}… is not that of the seed this browser keeps.", commitment.slice(0, 8)) + by); return; }
  try {
    const n = ++state.issued;
    const r = await call(T, "RevealSeed", { requestId: rid(), tableId: t.tableId, playerId: state.me, seed: rec.seed });
    updateSeed(key, { revealed: true });
    seedNote(key, "");
    if (r && r.table) render(r.table, n);
  } catch (e) {
    seedNote(key, tf("Your seed was not revealed: {0}", explain(e)), e);
    if (transient(e)) again(key, state.seedRevealTried, 6, t.tableId);
  }
}

// revealElsewhere reads, every 3 s, the tables other than the open one
// where the player has a commitment in a shoe not yet seeded, and reveals
// his seed when the table asks for it: opening another table does not
// withhold a seed.
async function revealElsewhere() {
  if (!isPlayer() || state.elsewhereBusy) return;
  state.elsewhereBusy = true;
  try {
    for (const [key, rec] of ownSeeds()) {
      if (rec.done || rec.tableId === state.tableId) continue;
      let t;
      try {
        t = (await call(T, "GetTable", { tableId: rec.tableId })).table;
      } catch (e) {
        if (e.reason === "TABLE_NOT_FOUND") updateSeed(key, { done: true });
        continue;
      }
      await seedsFor(t, false);
    }
  } finally { state.elsewhereBusy = false; }
}
setInterval(revealElsewhere, 3000);

// renderFair is the "Fair shoe" line: the shoe's server commitment and
// where its player entropy stands; for a player, his own part; and, once
// his seed is in a shoe, his seed and how to check the shoe once closed.
function renderFair(t) {
  const e = t.shoeEntropy || {}, box = $("fair"), mineEl = $("fair-mine"), hint = $("fair-verify");
  const server = ChemmyFair.hexOfBase64(e.commitment);
  const ids = e.playerIds || [], revealed = e.revealedPlayerIds || [], withheld = e.withheldPlayerIds || [];
  let s;
  if (!server) s = tr(t.certification ? "a prepared order (certification shoe): no seeds" : "no server commitment");
  else {
    s = tf("server commitment {0}… · ", server.slice(0, 8));
    if (e.seeded) s += e.playerEntropy ? tf("seeded with the seeds of {0}", names(ids)) : tr("no player entropy: no player's seed is in this shoe");
    else if (e.revealing) s += tf("commitments fixed ({0}): revealed {1}, reveal by {2}", names(ids), names(revealed) || tr("none"), clock(e.revealDeadline));
    else if (e.collecting) s += (ids.length ? tf("seeds committed by {0}", names(ids)) : tr("no seed committed yet")) + (e.commitDeadline ? tf(", commitments until {0}", clock(e.commitDeadline)) : "");
    else if (e.cutterPlayerId) s += tf("its player seed is {0}'s cut", you(e.cutterPlayerId));
    else s += tr("takes no players' seeds");
  }
  if (withheld.length) s += tf(" · withheld at this table: {0}", names(withheld));
  box.textContent = s;
  box.title = server ? tf("SHA-256 of the shoe's server seed: {0}", server) : "";
  box.dataset.commitment = server;

  mineEl.hidden = hint.hidden = !isPlayer();
  if (!isPlayer()) return;
  const me = state.me, key = seedKey(t.tableId, t.shoeId, me);
  const mc = (e.commitments || []).find((c) => c.playerId === me);
  const mine = mc ? ChemmyFair.hexOfBase64(mc.commitment) : "";
  const c = tf(" (commitment {0}…)", mine.slice(0, 8));
  let status = "", text = "";
  if (withheld.includes(me)) { status = "withheld"; text = tr("You withheld a committed seed at this table: it takes no seed of yours again."); }
  else if (e.seeded && mine && ids.includes(me)) { status = "in-shoe"; text = tf("Your seed is in this shoe{0}.", c); }
  else if (e.seeded && storedSeed(key)) { status = "not-in-shoe"; text = tr("Your seed is not in this shoe."); }
  else if (e.revealing && mine && revealed.includes(me)) { status = "revealed"; text = tf("Your seed is revealed{0}: the shoe is seeded once every committed seed is in.", c); }
  else if (e.revealing && mine) { status = "revealing"; text = tf("Revealing your seed{0}…", c); }
  else if (e.collecting && mine) { status = "committed"; text = tf("Your seed is committed{0}: the console reveals it when the table asks.", c); }
  else if (e.collecting && !takesPart(t)) { status = "idle"; text = tr("Sit down or bet, and the console commits a seed of yours to this shoe."); }
  else if (e.collecting) { status = "committing"; text = tr("Committing your seed…"); }
  const note = state.seedNotes[key];
  if (note && !["in-shoe", "revealed", "committed"].includes(status)) { status = "problem"; text = note.text; }
  mineEl.textContent = text;
  mineEl.dataset.status = status;
  mineEl.dataset.commitment = mine;
  mineEl.dataset.reason = (status === "problem" && note.reason) || "";

  // The seed to check with: this shoe's once his seed is in it, else the
  // latest earlier shoe at this table his seed went into.
  let rec = status === "in-shoe" ? storedSeed(key) : null;
  if (!rec) {
    rec = ownSeeds().map(([, r]) => r).filter((r) => r.tableId === t.tableId && r.shoeId !== t.shoeId && r.inShoe)
      .sort((a, b) => num(b.at) - num(a.at))[0] || null;
  }
  hint.textContent = rec ? (rec.shoeId === t.shoeId ? tr("Your seed: ") : tf("Your seed in shoe {0}: ", rec.shoeNumber)) + rec.seed +
    tf(". Once the shoe is closed, check it on its GetShoeReveal (shoe {0}): ", rec.shoeId) + "chemmy verify -commitment " + rec.serverCommitment +
    " -player-seed " + rec.seed : "";
  hint.dataset.seed = rec ? rec.seed : "";
}

// tick shows the time left to the table's deadline, in words and as a
// countdown ring (the share left of the time from when the page first
// saw that deadline).
function tick() {
  const t = state.table;
  const el = $("timeleft"), ring = $("ring");
  if (!t || !t.turnDeadline) { el.textContent = "—"; ring.hidden = true; return; }
  const end = Date.parse(t.turnDeadline);
  if (state.deadline !== t.turnDeadline) { state.deadline = t.turnDeadline; state.deadlineSeen = Date.now(); }
  const ms = Math.max(0, end - Date.now()), left = Math.round(ms / 1000);
  el.textContent = left + " s";
  ring.hidden = false;
  $("ring-text").textContent = String(left);
  ring.style.setProperty("--left", String(Math.min(1, ms / Math.max(1, end - state.deadlineSeen))));
  ring.classList.toggle("mine", $("prompt").classList.contains("mine"));
}
setInterval(tick, 1000);

// Actions: the table in each answer is shown at once.
async function tableAct(method, extra) {
  const n = ++state.issued;
  const r = await act(() => call(T, method, Object.assign({ requestId: rid(), tableId: state.tableId, playerId: state.me }, extra || {})));
  if (r && r.table) render(r.table, n);
  return r;
}

// amountAct calls method with the amount typed in input id (major units
// of the table's currency) as field, in minor units; an amount that is
// none, or has more decimals than the currency, is refused here.
function amountAct(method, id, extra, field) {
  const t = state.table, exp = expOf(t), v = minorOf($(id).value, exp);
  if (v === null || v === "0") {
    showError(new CallError("invalid_argument", tr("Not an amount of") + " " + (codeOf(t) || tr("the table's currency")) + ": " + JSON.stringify($(id).value) +
      " (" + (exp ? tr("at most") + " " + exp + " " + tr("decimals") : tr("no decimals")) + ")", "", ""));
    return null;
  }
  return tableAct(method, Object.assign({ [field || "amount"]: v }, extra || {}));
}

// amountDefaults fills the amount inputs, once per table, with its
// minimums in major units.
function amountDefaults(t) {
  if (state.amountsFor === t.tableId) return;
  state.amountsFor = t.tableId;
  const r = rulesOf(t), exp = expOf(t);
  $("bank-amount").value = money(num(r.minimumBank) || 100 * 10 ** exp, exp).split(SEPARATORS.group).join("");
  $("bet-amount").value = money(num(r.minBet) || num(r.minStake) || 10 ** exp, exp).split(SEPARATORS.group).join("");
}

async function createTable() {
  const variant = $("new-game").value, field = GAMES[variant].rules;
  let rules = {};
  const text = $("new-rules").value.trim();
  if (text) {
    try { rules = JSON.parse(text); } catch (e) { showError(new CallError("invalid_argument", "The house rules are not JSON: " + e.message, "", "")); return; }
  }
  const r = await act(() => call(T, "CreateTable", { requestId: rid(), variant, [field]: rules }));
  if (r) { await lobby(); openTable(r.table.tableId); }
}

function bind() {
  $("login-form").addEventListener("submit", (e) => { e.preventDefault(); signIn(); });
  $("refresh").addEventListener("click", lobby);
  $("lobby-game").addEventListener("change", lobby);
  $("lobby-open").addEventListener("change", lobby);
  $("create-form").addEventListener("submit", (e) => { e.preventDefault(); createTable(); });
  const banque = () => state.table && gameOf(state.table).key === "banque";
  $("sit").addEventListener("click", () => tableAct("JoinTable", banque() ? { side: $("side").value } : {}));
  $("gallery-join").addEventListener("click", () => tableAct("JoinGallery"));
  $("leave").addEventListener("click", () => tableAct("LeaveTable"));
  $("reality-continue").addEventListener("click", () => answerRealityCheck("REALITY_CHECK_ANSWER_CONTINUE"));
  $("reality-stop").addEventListener("click", () => answerRealityCheck("REALITY_CHECK_ANSWER_STOP"));
  $("accept-bank").addEventListener("click", () => amountAct("AcceptBank", "bank-amount"));
  $("bid-bank").addEventListener("click", () => amountAct("BidBank", "bank-amount"));
  $("decline-bank").addEventListener("click", () => tableAct("DeclineBank"));
  $("pass-bank").addEventListener("click", () => tableAct("PassBank"));
  $("raise-bank").addEventListener("click", () => tableAct("RaiseBank", { raise: true }));
  $("keep-bank").addEventListener("click", () => tableAct("RaiseBank", { raise: false }));
  $("bet").addEventListener("click", () => {
    const extra = {};
    if (banque()) extra.side = $("bet-side").value;
    else if (state.table && gameOf(state.table).key === "cf" && $("over-bank").checked) extra.overBank = true;
    return amountAct("PlaceBet", "bet-amount", extra);
  });
  $("banco").addEventListener("click", () => tableAct("CallBanco"));
  $("decline-bet").addEventListener("click", () => tableAct("DeclineBet"));
  $("move-top").addEventListener("click", () => tableAct("MoveTopCards", { count: Number($("move-count").value || 0) }));
  const decide = (choice) => {
    const cp = (state.table && state.table.coup) || {};
    return tableAct("DecideDraw", Object.assign({ choice }, banque() && cp.decisionHand ? { hand: cp.decisionHand } : {}));
  };
  $("draw").addEventListener("click", () => decide("DRAW_CHOICE_DRAW"));
  $("stand").addEventListener("click", () => decide("DRAW_CHOICE_STAND"));
  $("void").addEventListener("click", () => act(() => call(T, "VoidCoup", { requestId: rid(), tableId: state.tableId, coupId: $("void").dataset.coup || "", reason: $("reason").value })));
  $("close").addEventListener("click", () => act(() => call(T, "CloseTable", { requestId: rid(), tableId: state.tableId, reason: $("reason").value })));
  visibility();
}

async function start() {
  translateStatic();
  ChemmyRoads.words(tr);
  bind();
  pruneSeeds();
  await loadReasons();
  if (state.token) { $("token").value = state.token; signIn(); }
}
start();
