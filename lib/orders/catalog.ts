import { z } from "zod";

/**
 * What the shop sells. The server prices every cart from this list and never
 * trusts an amount sent by a client. Amounts are in the currency's minor unit
 * (cents), as payment providers expect.
 */
export const productSchema = z.object({
  sku: z.string(),
  name: z.string(),
  description: z.string(),
  unitAmount: z.number().int(),
  currency: z.literal("usd"),
  image: z.string(),
});
export type Product = z.infer<typeof productSchema>;

export const CATALOG: readonly Product[] = [
  {
    sku: "mug-ceramic-350",
    name: "Stoneware Mug",
    description: "350 ml, glazed by hand in a speckled oat finish.",
    unitAmount: 1800,
    currency: "usd",
    image: "/products/mug.svg",
  },
  {
    sku: "beans-house-250",
    name: "House Blend Beans",
    description: "250 g of medium roast, notes of cocoa and red apple.",
    unitAmount: 1450,
    currency: "usd",
    image: "/products/beans.svg",
  },
  {
    sku: "dripper-v60-02",
    name: "Pour-Over Dripper",
    description: "Size 02 ceramic cone for one to four cups.",
    unitAmount: 2600,
    currency: "usd",
    image: "/products/dripper.svg",
  },
  {
    sku: "kettle-gooseneck-1l",
    name: "Gooseneck Kettle",
    description: "1 litre, brushed steel, a slow and steady pour.",
    unitAmount: 5900,
    currency: "usd",
    image: "/products/kettle.svg",
  },
  {
    sku: "filters-paper-100",
    name: "Paper Filters",
    description: "100 unbleached cone filters, size 02.",
    unitAmount: 650,
    currency: "usd",
    image: "/products/filters.svg",
  },
  {
    sku: "grinder-hand-burr",
    name: "Hand Burr Grinder",
    description: "Steel conical burrs, 40 click settings.",
    unitAmount: 8900,
    currency: "usd",
    image: "/products/grinder.svg",
  },
];

const bySku = new Map(CATALOG.map((product) => [product.sku, product]));

export function findProduct(sku: string): Product | undefined {
  return bySku.get(sku);
}
