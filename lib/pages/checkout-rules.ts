import { MAX_KEY_LENGTH } from "@oncepay/idempotency/request";
import type { KeyPolicy } from "@/lib/openapi/document";
import { duration } from "@/lib/openapi/duration";

/**
 * What a client of POST /api/orders does with its Idempotency-Key, in the
 * order it meets the questions: the rules the checkout page follows
 * (components/shop/useCheckout.ts) and DESIGN.md's contract states. Each
 * names the answers it is about, and the page's test checks that the
 * document lists every one of them for the checkout.
 */
export interface CheckoutRule {
  title: string;
  text: string;
  /** The checkout's answers the rule is about: a status, or a status with a problem slug. */
  answers: { status: number; problem?: string }[];
}

export function checkoutRules(policy: KeyPolicy): CheckoutRule[] {
  const retention = duration(policy.retentionSeconds);
  const lease = duration(policy.leaseSeconds);
  return [
    {
      title: "One key per purchase",
      text: "Make a new random key (a UUID) when the shopper submits the cart, before the first attempt, and keep it until an answer says the purchase is settled. Another cart, or another card after a decline, is another purchase with a new key.",
      answers: [{ status: 201 }],
    },
    {
      title: "Retry with the same key and the same body",
      text: "After a timeout, a dropped connection, a 500 or a 503, send the request again with the same key. The server claims the key before it charges, so a retry can never charge a second time: it gets the first attempt's answer, or finishes the purchase the first attempt began.",
      answers: [{ status: 500 }, { status: 503 }],
    },
    {
      title: "A finished purchase answers again, unchanged",
      text: "A retry after the first attempt finished gets the same status and body again, marked Idempotent-Replayed: true. That includes a decline: the 402 is the key's result.",
      answers: [{ status: 201 }, { status: 402, problem: "payment-declined" }],
    },
    {
      title: "Wait while another attempt runs",
      text: `A retry while an attempt under the key is still running gets 409 with Retry-After: wait that many seconds and retry with the same key. An attempt holds its key for a lease of ${lease}; if it dies, a retry after the lease takes the key over and finishes the purchase.`,
      answers: [{ status: 409, problem: "request-in-progress" }],
    },
    {
      title: "A key is bound to its request",
      text: "The key belongs to the account that sent it and remembers the request's method, path and body. The same key with a different body gets 422: that is a new request, and needs a new key.",
      answers: [{ status: 422, problem: "idempotency-key-reused" }],
    },
    {
      title: `Keys are kept for ${retention}`,
      text: `Within ${retention} of a key's first request, every retry gets its answer. After that the key is forgotten; reusing it for a cart the payment provider still remembers gets 422 rather than a second charge.`,
      answers: [{ status: 422, problem: "idempotency-key-expired" }],
    },
    {
      title: "Fix the request, not the key",
      text: `A missing, malformed or repeated Idempotency-Key header gets 400 before anything is stored. The key is 1 to ${MAX_KEY_LENGTH} characters of printable ASCII without spaces, sent once, bare or as an RFC 8941 string ("…").`,
      answers: [
        { status: 400, problem: "idempotency-key-missing" },
        { status: 400, problem: "idempotency-key-invalid" },
        { status: 400, problem: "idempotency-key-repeated" },
      ],
    },
  ];
}
