/** Webhook deliveries that failed or wait, with an admin's Retry; and a transfer's own deliveries for its page. */
import type { Delivery } from "../api-types.js";
import { button, byId, element, row, table } from "../dom.js";
import { confirmThen } from "../page-actions.js";
import { ApiError } from "../session.js";
import type { ViewContext } from "../view-context.js";

export class WebhooksView {
  // A service without WEBHOOK_URL answers 404 to every deliveries request: asked once, not every poll.
  #off = false;

  async show(context: ViewContext): Promise<void> {
    const { session } = context;
    const target = byId("deliveries");
    if (!session.admin) {
      target.replaceChildren(element("p", "Shown to admin keys only."));
      return;
    }
    if (this.#off) return;
    let failed: Delivery[];
    let pending: Delivery[];
    try {
      [failed, pending] = await Promise.all(["failed", "pending"].map(async (state) => (await session.get<{ deliveries: Delivery[] }>(`/webhooks/deliveries?state=${state}`)).deliveries));
    } catch (error) {
      if (error instanceof ApiError && error.code === "WEBHOOKS_NOT_CONFIGURED") {
        this.#off = true;
        target.replaceChildren(element("p", "Webhooks are not configured (WEBHOOK_URL)."));
        return;
      }
      throw error;
    }
    if (failed.length + pending.length === 0) {
      target.replaceChildren(element("p", "No failed or pending deliveries."));
      return;
    }
    const listed = table(["Delivery", "Event", "Endpoint", "State", "Tries", "Last answer", "Actions"]);
    for (const delivery of [...failed, ...pending]) {
      const retry = button("Retry", `Retry delivery ${delivery.id}`, () => void confirmThen(context, `Deliver ${delivery.type} (delivery ${delivery.id}) again now?`, "POST", `/webhooks/deliveries/${delivery.id}/retry`));
      row(listed, [delivery.id, delivery.type, delivery.endpoint, delivery.state, delivery.attempts, delivery.lastStatus ?? "—", retry]);
    }
    target.replaceChildren(listed);
  }

  /** A transfer's deliveries, for an admin key (none read without webhooks, or when the read fails). */
  async deliveriesOf(context: ViewContext, hash: string): Promise<Delivery[]> {
    if (!context.session.admin || this.#off) return [];
    const answer = await context.session.get<{ deliveries: Delivery[] }>(`/webhooks/deliveries?transfer=${hash}`).catch(() => ({ deliveries: [] as Delivery[] }));
    return answer.deliveries;
  }
}
