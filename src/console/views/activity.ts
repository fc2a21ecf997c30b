/** The last 24 hours as two charts: transfers (sent, mined, failed) and gas spent, hour by hour. */
import type { ActivityHour } from "../api-types.js";
import { barChart } from "../bar-chart.js";
import { byId, element } from "../dom.js";
import { ether, etherOf } from "../figures.js";
import { bodyOf } from "../session.js";
import type { ViewContext } from "../view-context.js";

/** The charts' figures: what was made since the service's last tally is counted every 2 s; asked for as often. */
const ACTIVITY_POLL_MS = 2_000;

function hourLabel(hour: ActivityHour): string {
  return new Date(hour.start).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

export class ActivityView {
  // When the charts were last asked for (ms), and the figures they show.
  #shownAt = 0;
  #figures = "";

  async show(context: ViewContext): Promise<void> {
    if (Date.now() - this.#shownAt < ACTIVITY_POLL_MS) return;
    this.#shownAt = Date.now();
    const target = byId("activity");
    const answer = await context.session.call<{ hours: ActivityHour[] }>("GET", "/transfers/activity");
    if (answer.status === 403) {
      target.replaceChildren(element("p", "Shown to read and admin keys."));
      return;
    }
    const { hours } = bodyOf(answer);
    // Drawn again only when a figure changed: an unfolded hour-by-hour list stays open.
    const figures = JSON.stringify(hours);
    if (figures === this.#figures) return;
    this.#figures = figures;
    // Hour-by-hour lists an operator opened stay open when the charts are drawn again.
    const opened = [...target.querySelectorAll<HTMLDetailsElement>("details.hours")].map((details) => details.open);
    target.replaceChildren(transfersChart(hours), gasChart(hours));
    target.querySelectorAll<HTMLDetailsElement>("details.hours").forEach((details, index) => (details.open = opened[index] ?? false));
  }

  /** The next key may not see every client's counts: the charts are asked for again at its sign-in. */
  reset(): void {
    this.#shownAt = 0;
    this.#figures = "";
    byId("activity").replaceChildren();
  }
}

function transfersChart(hours: ActivityHour[]): HTMLElement {
  const total = (pick: (hour: ActivityHour) => number) => hours.reduce((sum, hour) => sum + pick(hour), 0);
  return barChart(
    `Transfers in the last 24 hours: ${total((hour) => hour.sent)} sent, ${total((hour) => hour.mined)} mined, ${total((hour) => hour.failed)} failed`,
    hours,
    [
      { name: "sent", className: "bar-sent", value: (hour) => hour.sent },
      { name: "mined", className: "bar-mined", value: (hour) => hour.mined },
      { name: "failed", className: "bar-failed", value: (hour) => hour.failed },
    ],
    (hour) => `${hourLabel(hour)}: ${hour.sent} sent, ${hour.mined} mined, ${hour.failed} failed`,
  );
}

function gasChart(hours: ActivityHour[]): HTMLElement {
  const spent = hours.reduce((sum, hour) => sum + BigInt(hour.gasSpentWei ?? "0"), 0n);
  return barChart(
    `Gas spent in the last 24 hours: ${ether(spent.toString())} (since this service started)`,
    hours,
    [{ name: "ETH spent", className: "bar-gas", value: (hour) => etherOf(hour.gasSpentWei) }],
    (hour) => `${hourLabel(hour)}: ${hour.gasSpentWei === null ? "no figure (before this service started)" : ether(hour.gasSpentWei)}`,
  );
}
