import type { Metadata, Viewport } from "next";
import "./globals.css";

export const metadata: Metadata = {
  title: "OncePay Coffee Supply",
  description:
    "A small coffee-gear shop whose checkout charges every order exactly once, using the Idempotency-Key pattern.",
};

export const viewport: Viewport = {
  themeColor: "#3a271d",
};

export default function RootLayout({ children }: Readonly<{ children: React.ReactNode }>) {
  return (
    <html lang="en">
      {/* A column at least the viewport's height: the footer (mt-auto) sits at its bottom on a short page. */}
      <body className="flex min-h-dvh flex-col bg-cream font-sans text-espresso antialiased">
        {children}
      </body>
    </html>
  );
}
