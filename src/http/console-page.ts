/**
 * The console's page and stylesheet (its script is src/console/, compiled at build time). Kept as
 * text in the server's code so that the compiled service carries them wherever it runs, with no file to
 * find at run time and nothing loaded from another origin.
 */

export const CONSOLE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Token transfer console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/console.css">
<script type="module" src="/console/app.js"></script>
</head>
<body>
<header>
  <h1>Token transfer console</h1>
  <p id="role" class="muted"></p>
  <label id="network-choice" hidden>Network <select id="network"></select></label>
  <p id="updated" class="muted" role="status" aria-live="polite"></p>
  <button id="sign-out" type="button" hidden>Sign out</button>
</header>
<main>
  <section id="sign-in" aria-labelledby="sign-in-title">
    <h2 id="sign-in-title">Sign in</h2>
    <form id="sign-in-form">
      <label for="api-key">API key (a <code>read</code> or <code>admin</code> key)</label>
      <input id="api-key" name="api-key" type="password" autocomplete="off" required>
      <button type="submit">Sign in</button>
      <p class="muted">The key stays in this tab only, and goes to this service only.</p>
      <p id="sign-in-error" role="alert"></p>
    </form>
  </section>
  <div id="app" hidden>
    <p id="outcome" role="status" aria-live="polite"></p>
    <section aria-labelledby="wallet-title">
      <h2 id="wallet-title">Wallet</h2>
      <div id="wallet" class="scroll"></div>
    </section>
    <section aria-labelledby="approvals-title">
      <h2 id="approvals-title">Awaiting approval</h2>
      <div id="approvals" class="scroll"></div>
    </section>
    <section aria-labelledby="address-book-title">
      <h2 id="address-book-title">Address book</h2>
      <div id="address-book" class="scroll"></div>
      <form id="address-book-form" hidden>
        <label for="address-book-address">Address</label>
        <input id="address-book-address" name="address" autocomplete="off" required pattern="0x[0-9a-fA-F]{40}">
        <label for="address-book-label">Label</label>
        <input id="address-book-label" name="label" autocomplete="off" maxlength="100">
        <button type="submit">Add to the address book</button>
      </form>
    </section>
    <section aria-labelledby="activity-title">
      <h2 id="activity-title">Last 24 hours</h2>
      <div id="activity" class="charts"></div>
    </section>
    <section aria-labelledby="in-flight-title">
      <h2 id="in-flight-title">In flight</h2>
      <div id="in-flight" class="scroll"></div>
    </section>
    <section id="detail" aria-labelledby="detail-title" hidden>
      <h2 id="detail-title" tabindex="-1">Transfer</h2>
      <div id="detail-body" class="scroll"></div>
      <button id="close-detail" type="button">Close</button>
    </section>
    <section aria-labelledby="recent-title">
      <h2 id="recent-title">Recent transfers</h2>
      <form id="search-form" role="search">
        <label for="search">Hash, recipient, Idempotency-Key or payout item id</label>
        <input id="search" name="search" type="search" autocomplete="off">
        <button type="submit">Find</button>
        <button id="clear-search" type="button">Show recent</button>
      </form>
      <div id="recent" class="scroll"></div>
    </section>
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Webhook deliveries, failed and pending</h2>
      <div id="deliveries" class="scroll"></div>
    </section>
    <section aria-labelledby="audit-title">
      <h2 id="audit-title">Audit log, newest first</h2>
      <div id="audit-controls" hidden>
        <button id="audit-newer" type="button" disabled>Newer</button>
        <button id="audit-older" type="button" disabled>Older</button>
        <button id="audit-download" type="button">Download CSV</button>
      </div>
      <div id="audit" class="scroll"></div>
    </section>
  </div>
  <dialog id="confirm" aria-labelledby="confirm-text">
    <form method="dialog">
      <p id="confirm-text"></p>
      <button value="no" type="submit" autofocus>No</button>
      <button value="yes" type="submit">Yes</button>
    </form>
  </dialog>
</main>
</body>
</html>
`;

export const CONSOLE_CSS = `
:root { color-scheme: light dark; --muted: #666; --warn: #b35900; --line: #8884; font: 15px/1.45 system-ui, sans-serif; }
*, *::before, *::after { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1200px; padding: 0 16px 32px; overflow-wrap: anywhere; }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 16px; border-bottom: 1px solid var(--line); }
header h1 { font-size: 1.3rem; margin: 12px 0; flex: 1 1 auto; }
h2 { font-size: 1.1rem; margin: 24px 0 8px; }
h3 { font-size: 1rem; margin: 16px 0 4px; }
.muted { color: var(--muted); margin: 0; }
.warn { color: var(--warn); font-weight: 600; }
.alert { border: 2px solid #c5221f; border-radius: 4px; padding: 8px 12px; margin: 0 0 12px; }
.alert strong { color: #c5221f; }
form { display: flex; flex-wrap: wrap; align-items: center; gap: 8px; }
#sign-in-form { flex-direction: column; align-items: flex-start; max-width: 420px; }
#sign-in-form input { width: 100%; }
label { font-weight: 600; }
input, button { font: inherit; padding: 6px 10px; min-height: 36px; }
button { cursor: pointer; border: 1px solid var(--line); border-radius: 4px; background: Canvas; color: CanvasText; }
button.link { border: none; padding: 0; min-height: 0; text-decoration: underline; font-family: ui-monospace, monospace; background: none; }
:focus-visible { outline: 3px solid #1a73e8; outline-offset: 2px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
/* A heading is a word or two: never broken inside a word ("Stat / e") however narrow its column. */
th { overflow-wrap: normal; white-space: nowrap; }
code { font-family: ui-monospace, monospace; font-size: 0.9em; word-break: break-all; }
.scroll { overflow-x: auto; }
.actions { display: flex; gap: 6px; flex-wrap: wrap; }
#audit summary { font-family: ui-monospace, monospace; font-size: 0.9em; cursor: pointer; word-break: break-all; }
#audit-controls:not([hidden]) { display: flex; gap: 6px; flex-wrap: wrap; margin-bottom: 8px; }
ul.recipients { margin: 0; padding-left: 1.1em; }
#address-book-form:not([hidden]) { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin-top: 8px; }
#sign-in-error, #outcome { font-weight: 600; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; }
dd { margin: 0; word-break: break-all; }
dialog { max-width: 480px; }
.charts { display: flex; flex-wrap: wrap; gap: 12px 24px; }
.charts figure { margin: 0; flex: 1 1 260px; max-width: 520px; min-width: 0; }
.chart { display: block; width: 100%; height: auto; }
.chart-label { font-size: 7px; fill: var(--muted); }
.bar-sent { fill: #1a73e8; background: #1a73e8; }
.bar-mined { fill: #188038; background: #188038; }
.bar-failed { fill: #d93025; background: #d93025; }
.bar-gas { fill: #b35900; background: #b35900; }
.bar-none { fill: var(--line); }
.chart-axis { fill: var(--line); }
.bar-hit { fill: transparent; }
.chart-hour:hover .bar-hit { fill: #8882; }
.hours { font-size: 0.85em; color: var(--muted); }
.hours ol { list-style: none; margin: 4px 0 0; padding: 0; max-height: 12em; overflow-y: auto; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 12px; margin: 4px 0 0; font-size: 0.9em; color: var(--muted); }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: baseline; }
@media (max-width: 640px) {
  body { padding: 0 10px 24px; }
  thead { position: absolute; left: -10000px; }
  table, tbody, tr, td { display: block; width: 100%; }
  tr { border-bottom: 2px solid var(--line); padding: 6px 0; }
  td { border: none; padding: 2px 0; display: grid; grid-template-columns: 8.5em 1fr; gap: 8px; }
  td::before { content: attr(data-label); color: var(--muted); }
  td > * { justify-self: start; }
  dl { grid-template-columns: 1fr; }
}
`;
