/** What a client of a wallet pool does with 503 NO_LANE_AVAILABLE: nothing was sent, so it asks again shortly. */

/** Sends again, every 100 ms and at most `tries` times, while the answer is 503 NO_LANE_AVAILABLE. */
export async function retryWhilePoolBusy<T extends { statusCode: number; raw: string } | undefined>(send: () => Promise<T>, tries = 100): Promise<T> {
  for (let tried = 1; ; tried++) {
    const answer = await send();
    if (tried >= tries || answer?.statusCode !== 503 || !answer.raw.includes("NO_LANE_AVAILABLE")) return answer;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
