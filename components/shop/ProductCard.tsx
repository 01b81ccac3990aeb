import Image from "next/image";
import type { Product } from "@/lib/orders/catalog";
import { formatMoney } from "@/components/ui/money";
import { PlusIcon } from "@/components/ui/icons";

interface ProductCardProps {
  product: Product;
  quantityInCart: number;
  disabled: boolean;
  onAdd: (sku: string) => void;
  priority?: boolean;
}

export function ProductCard({
  product,
  quantityInCart,
  disabled,
  onAdd,
  priority = false,
}: ProductCardProps) {
  const headingId = `product-${product.sku}`;
  return (
    <article
      data-testid="product-card"
      data-sku={product.sku}
      aria-labelledby={headingId}
      className="group flex w-full overflow-hidden rounded-2xl border border-sand bg-white shadow-[0_1px_2px_rgba(43,29,22,0.05)] transition-shadow duration-200 hover:shadow-[0_10px_30px_-12px_rgba(43,29,22,0.25)] sm:flex-col"
    >
      <div className="relative w-32 shrink-0 overflow-hidden bg-oat sm:aspect-[4/3] sm:w-auto">
        <Image
          src={product.image}
          alt=""
          width={400}
          height={300}
          unoptimized
          priority={priority}
          className="size-full object-cover transition-transform duration-300 group-hover:scale-[1.03] motion-reduce:transition-none motion-reduce:group-hover:scale-100"
        />
        {quantityInCart > 0 && (
          <span className="absolute left-2 top-2 rounded-full bg-white/95 px-2 py-0.5 text-xs font-semibold text-sage shadow-sm sm:left-3 sm:top-3 sm:px-2.5 sm:py-1">
            In cart: {quantityInCart}
          </span>
        )}
      </div>
      <div className="flex min-w-0 flex-1 flex-col p-4 sm:p-5">
        <h3
          id={headingId}
          className="font-display text-lg font-semibold leading-tight text-espresso sm:text-xl"
        >
          {product.name}
        </h3>
        <p className="mt-1 font-semibold tabular-nums text-clay" data-testid="product-price">
          {formatMoney(product.unitAmount, product.currency)}
        </p>
        <p className="mt-2 text-sm leading-relaxed text-mocha">{product.description}</p>
        <div className="mt-auto pt-4">
          <button
            type="button"
            onClick={() => onAdd(product.sku)}
            disabled={disabled}
            className="inline-flex w-full items-center justify-center gap-1.5 whitespace-nowrap rounded-full bg-roast px-4 py-2.5 text-sm font-semibold text-cream transition-colors hover:bg-espresso active:translate-y-px disabled:cursor-not-allowed disabled:bg-oat disabled:text-espresso disabled:ring-1 disabled:ring-inset disabled:ring-latte"
          >
            <PlusIcon width={16} height={16} />
            <span>
              Add<span className="sr-only"> {product.name}</span> to cart
            </span>
          </button>
        </div>
      </div>
    </article>
  );
}
