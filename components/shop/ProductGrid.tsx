import type { Product } from "@/lib/orders/catalog";
import { ProductCard } from "./ProductCard";

interface ProductGridProps {
  products: readonly Product[];
  quantities: ReadonlyMap<string, number>;
  disabled: boolean;
  onAdd: (sku: string) => void;
}

export function ProductGrid({ products, quantities, disabled, onAdd }: ProductGridProps) {
  return (
    <ul
      className="grid grid-cols-1 gap-4 sm:grid-cols-2 sm:gap-5 xl:grid-cols-3"
      aria-label="Products"
    >
      {products.map((product, index) => (
        <li key={product.sku} className="flex">
          <ProductCard
            product={product}
            quantityInCart={quantities.get(product.sku) ?? 0}
            disabled={disabled}
            onAdd={onAdd}
            priority={index < 3}
          />
        </li>
      ))}
    </ul>
  );
}
