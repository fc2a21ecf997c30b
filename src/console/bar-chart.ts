/** Bar charts drawn by the page (SVG, no library), with their figures also as text. */
import type { ActivityHour } from "./api-types.js";
import { element, svg } from "./dom.js";

/** One series of a bar chart: its name (the legend), its colour (a class) and its value in an hour (null: no data). */
export interface Series {
  name: string;
  className: string;
  value: (hour: ActivityHour) => number | null;
}

/**
 * A small bar chart of the hours: a group of bars per hour, side by side for each series, scaled to the
 * highest; hovering an hour shows its figures. An hour without data is a flat mark. Below it, the same
 * figures as text, newest hour first, for keyboards, touch screens and screen readers, which cannot hover.
 */
export function barChart(label: string, hours: ActivityHour[], series: Series[], describe: (hour: ActivityHour) => string): HTMLElement {
  const figure = element("figure");
  figure.append(bars(label, hours, series, describe), legendOf(series), hourByHour(hours, describe));
  return figure;
}

function bars(label: string, hours: ActivityHour[], series: Series[], describe: (hour: ActivityHour) => string): SVGElement {
  const width = 240;
  const height = 64;
  const slot = width / Math.max(1, hours.length);
  const barWidth = (slot - 1) / series.length;
  const highest = Math.max(Number.MIN_VALUE, ...hours.flatMap((hour) => series.map((one) => one.value(hour) ?? 0)));
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height + 12}`, role: "img", "aria-label": label, class: "chart" });
  chart.append(svg("title", {}, label), svg("rect", { x: 0, y: height, width, height: 0.5, class: "chart-axis" }));
  hours.forEach((hour, index) => {
    const group = svg("g", { class: "chart-hour" });
    group.append(svg("title", {}, describe(hour)));
    series.forEach((one, position) => {
      const value = one.value(hour);
      const x = index * slot + position * barWidth;
      const barHeight = value === null ? 1 : highest > 0 ? (value / highest) * height : 0;
      group.append(svg("rect", { x, y: height - barHeight, width: Math.max(barWidth - 0.3, 0.3), height: barHeight, class: value === null ? "bar-none" : one.className }));
    });
    group.append(svg("rect", { x: index * slot, y: 0, width: slot, height, class: "bar-hit" }));
    chart.append(group);
  });
  if (hours.length > 0) {
    chart.append(
      svg("text", { x: 0, y: height + 10, class: "chart-label" }, `${hours.length} h ago`),
      svg("text", { x: width, y: height + 10, "text-anchor": "end", class: "chart-label" }, "now"),
    );
  }
  return chart;
}

function legendOf(series: Series[]): HTMLElement {
  const legend = element("p", undefined, "legend");
  for (const one of series) {
    const key = element("span");
    key.append(element("span", undefined, `swatch ${one.className}`), one.name);
    legend.append(key);
  }
  return legend;
}

function hourByHour(hours: ActivityHour[], describe: (hour: ActivityHour) => string): HTMLElement {
  const figures = element("details", undefined, "hours");
  const list = element("ol");
  for (const hour of [...hours].reverse()) list.append(element("li", describe(hour)));
  figures.append(element("summary", "Hour by hour"), list);
  return figures;
}
