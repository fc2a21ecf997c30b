/** The page's building blocks: elements with text only (nothing the service returns is parsed as HTML), and tables. */

const SVG_NS = "http://www.w3.org/2000/svg";

export function byId<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`the page has no #${id}`);
  return found as T;
}

/** An element with text content only. */
export function element(tag: string, text?: string | number | null, className?: string): HTMLElement {
  const created = document.createElement(tag);
  if (text !== undefined && text !== null) created.textContent = String(text);
  if (className) created.className = className;
  return created;
}

export function svg(tag: string, attributes: Record<string, string | number>, text?: string): SVGElement {
  const created = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) created.setAttribute(name, String(value));
  if (text !== undefined) created.textContent = text;
  return created;
}

/** A button that does `onClick`; its label for screen readers says what it acts on. */
export function button(label: string, ariaLabel: string, onClick: () => void, className?: string): HTMLButtonElement {
  const created = element("button", label, className) as HTMLButtonElement;
  created.type = "button";
  created.setAttribute("aria-label", ariaLabel);
  created.addEventListener("click", onClick);
  return created;
}

export function table(headings: string[]): HTMLTableElement {
  const created = document.createElement("table");
  const head = created.createTHead().insertRow();
  for (const heading of headings) {
    const cell = element("th", heading);
    cell.setAttribute("scope", "col");
    head.append(cell);
  }
  created.createTBody();
  return created;
}

export function row(target: HTMLTableElement, cells: (string | number | null | HTMLElement)[]): HTMLTableRowElement {
  const added = target.tBodies[0].insertRow();
  const headings = [...(target.tHead?.rows[0].cells ?? [])].map((cell) => cell.textContent ?? "");
  cells.forEach((content, index) => {
    const cell = added.insertCell();
    // On a narrow screen each cell shows its column's name (see the CSS).
    cell.dataset.label = headings[index];
    if (content instanceof HTMLElement) cell.append(content);
    else cell.textContent = content === null ? "—" : String(content);
  });
  return added;
}
