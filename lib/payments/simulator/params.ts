import {
  invalidRequest,
  resourceMissing,
  unknownParameter,
  type ApiResponse,
  type StripeErrorCode,
} from "@/lib/payments/simulator/errors";
import { listOf, type FormObject, type FormValue } from "@/lib/payments/simulator/form";
import { testCard } from "@/lib/payments/simulator/cards";

/**
 * The parameters of `POST /v1/payment_intents` that the simulator supports,
 * checked the way Stripe checks them: a bad request is answered 400 before
 * anything is claimed or charged, so (as at Stripe) no result is stored under
 * its Idempotency-Key and the same key can be used again once the request is
 * fixed. Unknown parameters are refused rather than ignored, so a client
 * relying on something the simulator does not do finds out at once. Each
 * refusal carries the `code` Stripe gives it, or none where Stripe gives none.
 * The readers of single parameters are exported for the other endpoint that
 * takes a body, POST /v1/refunds (refund-params.ts).
 */
export interface CreatePaymentIntentParams {
  amount: number;
  currency: string;
  paymentMethod: string | null;
  confirm: boolean;
  description: string | null;
  metadata: Record<string, string>;
  paymentMethodTypes: string[];
  /** As the intent shows it; null when `payment_method_types` chose the types instead. */
  automaticPaymentMethods: AutomaticPaymentMethods | null;
  /** Where the challenge page sends the shopper back after 3-D Secure; only with `confirm`. */
  returnUrl: string | null;
}

export interface AutomaticPaymentMethods {
  enabled: boolean;
  allow_redirects?: "always" | "never";
}

export type ParamsResult =
  { ok: true; params: CreatePaymentIntentParams } | { ok: false; response: ApiResponse };

const KNOWN = new Set([
  "amount",
  "currency",
  "payment_method",
  "confirm",
  "description",
  "metadata",
  "automatic_payment_methods",
  "payment_method_types",
  "return_url",
]);

// Stripe's limits: the smallest USD charge is $0.50; amounts fit in 8 digits.
const MIN_AMOUNT = 50;
const MAX_AMOUNT = 99_999_999;

/** A refused parameter, thrown by the readers below and caught by each endpoint's parser. */
export class ParamError extends Error {
  constructor(readonly response: ApiResponse) {
    super("invalid parameter");
  }
}

export function fail(message: string, param: string, code?: StripeErrorCode): never {
  throw new ParamError(invalidRequest(message, { param, ...(code && { code }) }));
}

/**
 * A required parameter, as Stripe reads it: absent is `parameter_missing`;
 * empty is an attempt to unset it (`parameter_invalid_empty`, with Stripe's
 * message); only whitespace is `parameter_invalid_string_blank`.
 */
export function requiredParam(form: FormObject, name: string): string {
  const value = stringParam(form, name);
  if (value === undefined) fail(`Missing required param: ${name}.`, name, "parameter_missing");
  if (value === "") {
    fail(
      `You passed an empty string for '${name}'. We assume empty values are an attempt to unset a parameter; however '${name}' cannot be unset. You should remove '${name}' from your request or supply a non-empty value.`,
      name,
      "parameter_invalid_empty",
    );
  }
  if (value.trim() === "")
    fail(`Invalid ${name}: it must not be blank.`, name, "parameter_invalid_string_blank");
  return value;
}

export function stringParam(form: FormObject, name: string, param = name): string | undefined {
  const value = form[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string")
    fail(`Invalid string: ${param} must be a plain value, not a nested one.`, param);
  return value;
}

function booleanParam(form: FormObject, name: string, param = name): boolean | undefined {
  const value = stringParam(form, name, param);
  if (value === undefined) return undefined;
  if (value !== "true" && value !== "false") fail(`Invalid boolean: ${value}`, param);
  return value === "true";
}

function objectParam(value: FormValue | undefined, param: string): FormObject | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string") {
    // `metadata=` (empty) is how Stripe clears a hash; on create it means none.
    if (value === "") return undefined;
    fail(`Invalid object: ${param} must be a hash.`, param);
  }
  if (Array.isArray(value)) fail(`Invalid object: ${param} must be a hash, not a list.`, param);
  return value;
}

export function rejectUnknown(form: FormObject, known: Set<string>, prefix?: string): void {
  for (const key of Object.keys(form)) {
    if (!known.has(key)) {
      throw new ParamError(unknownParameter(prefix ? `${prefix}[${key}]` : key));
    }
  }
}

function parseAmount(form: FormObject): number {
  const text = requiredParam(form, "amount");
  if (!/^\d{1,12}$/.test(text))
    fail(`Invalid integer: ${text}`, "amount", "parameter_invalid_integer");
  const amount = Number(text);
  if (amount < MIN_AMOUNT)
    fail(
      `Amount must be at least ${MIN_AMOUNT} in the currency's smallest unit.`,
      "amount",
      "amount_too_small",
    );
  if (amount > MAX_AMOUNT)
    fail(
      `Amount must be no more than ${MAX_AMOUNT} in the currency's smallest unit.`,
      "amount",
      "amount_too_large",
    );
  return amount;
}

function parseCurrency(form: FormObject): string {
  const text = requiredParam(form, "currency");
  const currency = text.toLowerCase();
  if (!/^[a-z]{3}$/.test(currency))
    fail(
      `Invalid currency: ${text}. Use a three-letter ISO currency code, such as usd.`,
      "currency",
    );
  return currency;
}

export function parseMetadata(form: FormObject): Record<string, string> {
  const hash = objectParam(form.metadata, "metadata");
  const metadata: Record<string, string> = {};
  if (!hash) return metadata;
  const keys = Object.keys(hash);
  if (keys.length > 50) fail("Invalid metadata: at most 50 keys.", "metadata");
  for (const key of keys) {
    const value = hash[key]!;
    const param = `metadata[${key}]`;
    if (typeof value !== "string") fail(`Invalid metadata: ${param} must be a string.`, param);
    if (key.length > 40)
      fail(`Invalid metadata: keys must be at most 40 characters (${param}).`, param);
    if (value.length > 500)
      fail(`Invalid metadata: values must be at most 500 characters (${param}).`, param);
    if (value !== "") metadata[key] = value;
  }
  return metadata;
}

/**
 * `automatic_payment_methods[enabled]`, `[allow_redirects]`: accepted, and
 * shown back as Stripe shows them (`allow_redirects` "always" unless said
 * otherwise); cards never redirect here.
 */
function parseAutomaticPaymentMethods(form: FormObject): AutomaticPaymentMethods | undefined {
  const hash = objectParam(form.automatic_payment_methods, "automatic_payment_methods");
  if (!hash) return undefined;
  rejectUnknown(hash, new Set(["enabled", "allow_redirects"]), "automatic_payment_methods");
  const enabled = booleanParam(hash, "enabled", "automatic_payment_methods[enabled]");
  if (enabled === undefined)
    fail(
      "Missing required param: automatic_payment_methods[enabled].",
      "automatic_payment_methods[enabled]",
      "parameter_missing",
    );
  const redirects = stringParam(
    hash,
    "allow_redirects",
    "automatic_payment_methods[allow_redirects]",
  );
  if (redirects !== undefined && redirects !== "always" && redirects !== "never") {
    fail(
      `Invalid automatic_payment_methods[allow_redirects]: must be one of always or never.`,
      "automatic_payment_methods[allow_redirects]",
    );
  }
  return enabled ? { allow_redirects: redirects ?? "always", enabled } : { enabled };
}

function parsePaymentMethodTypes(form: FormObject): string[] | undefined {
  if (form.payment_method_types === undefined) return undefined;
  const list = listOf(form.payment_method_types);
  if (!list || list.length === 0)
    fail("Invalid array: payment_method_types must be a non-empty list.", "payment_method_types");
  return list.map((type) => {
    if (type !== "card") {
      fail(
        `The payment method type provided: ${type} is invalid. The payment simulator supports only "card".`,
        "payment_method_types",
        "payment_intent_invalid_parameter",
      );
    }
    return type;
  });
}

function parsePaymentMethod(form: FormObject, confirm: boolean): string | null {
  const paymentMethod = stringParam(form, "payment_method") || null;
  if (paymentMethod !== null && !testCard(paymentMethod))
    throw new ParamError(resourceMissing("PaymentMethod", paymentMethod, "payment_method", 400));
  if (confirm && paymentMethod === null) {
    fail(
      "You cannot confirm this PaymentIntent because it's missing a payment method. Pass payment_method, such as pm_card_visa.",
      "payment_method",
      "payment_intent_unexpected_state",
    );
  }
  return paymentMethod;
}

// Stripe's own limit on URLs it stores.
const MAX_URL_LENGTH = 5000;

/**
 * An absolute http(s) URL, or a refusal naming `param`: where the shopper's
 * browser is sent (a return_url) or an event is posted (a webhook endpoint),
 * so anything else (a relative path, a `javascript:` URL) is refused here
 * rather than followed there.
 */
export function httpUrl(text: string, param: string): string {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (!url || !/^https?:$/.test(url.protocol) || text.length > MAX_URL_LENGTH)
    fail("Not a valid URL: it must be an absolute http or https URL.", param);
  return text;
}

function parseReturnUrl(form: FormObject, confirm: boolean): string | null {
  const text = stringParam(form, "return_url");
  if (text === undefined || text === "") return null;
  if (!confirm) fail("return_url can only be passed when confirm=true.", "return_url");
  return httpUrl(text, "return_url");
}

export function parseCreatePaymentIntent(form: FormObject): ParamsResult {
  try {
    rejectUnknown(form, KNOWN);
    const amount = parseAmount(form);
    const currency = parseCurrency(form);
    const confirm = booleanParam(form, "confirm") ?? false;
    const automatic = parseAutomaticPaymentMethods(form);
    const types = parsePaymentMethodTypes(form);
    if (automatic?.enabled && types) {
      fail(
        "You may only specify one of these parameters: automatic_payment_methods, payment_method_types.",
        "payment_method_types",
        "parameters_exclusive",
      );
    }
    const description = stringParam(form, "description") ?? null;
    if (description !== null && description.length > 1000)
      fail("Invalid description: at most 1000 characters.", "description");
    const returnUrl = parseReturnUrl(form, confirm);
    return {
      ok: true,
      params: {
        amount,
        currency,
        paymentMethod: parsePaymentMethod(form, confirm),
        confirm,
        description,
        metadata: parseMetadata(form),
        paymentMethodTypes: types ?? ["card"],
        // Since API version 2023-08-16 an intent that names no types has them chosen automatically.
        automaticPaymentMethods:
          automatic ?? (types ? null : { allow_redirects: "always", enabled: true }),
        returnUrl,
      },
    };
  } catch (error) {
    if (error instanceof ParamError) return { ok: false, response: error.response };
    throw error;
  }
}
