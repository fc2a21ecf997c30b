/** Actions several views offer: a change asked for after a confirmation, and a link to a transfer's page. */
import { button, byId, element } from "./dom.js";
import { shortHash } from "./figures.js";
import type { ViewContext } from "./view-context.js";

/** Asks first; then calls, and shows what the service answered. */
export async function confirmThen(context: ViewContext, question: string, method: string, path: string, onAccepted: () => void = () => {}): Promise<void> {
  const dialog = byId<HTMLDialogElement>("confirm");
  byId("confirm-text").textContent = question;
  dialog.returnValue = "";
  dialog.showModal();
  const confirmed = await new Promise<boolean>((resolve) => dialog.addEventListener("close", () => resolve(dialog.returnValue === "yes"), { once: true }));
  if (!confirmed) return;
  const outcome = byId("outcome");
  outcome.textContent = `${method} ${path}…`;
  const answer = await context.session.call<{ state?: string; message?: string }>(method, path);
  if (answer.status === 202) onAccepted();
  outcome.textContent =
    answer.status < 400
      ? `${method} ${path}: ${answer.status}${answer.body.state ? `, state ${answer.body.state}` : ""}${answer.body.message ? `: ${answer.body.message}` : ""}`
      : `${method} ${path}: ${answer.status} ${answer.body.code ?? ""}: ${answer.body.message ?? ""}`;
  await context.refresh();
}

/** A transfer's short hash, which opens its page. */
export function transferLink(context: ViewContext, hash: string | null): HTMLElement {
  if (!hash) return element("span", "—");
  const link = button(shortHash(hash), `Open transfer ${hash}`, () => void context.openTransfer(hash), "link");
  link.title = hash;
  return link;
}
