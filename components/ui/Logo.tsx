/** The brand mark: a roasted bean on an espresso tile (the same drawing as app/icon.svg). */
export function LogoMark({ size = 40 }: { size?: number }) {
  return (
    <svg viewBox="0 0 64 64" width={size} height={size} aria-hidden="true" focusable="false">
      <rect width="64" height="64" rx="16" fill="#3A271D" />
      <ellipse cx="32" cy="32" rx="15" ry="20" fill="#E9B872" transform="rotate(28 32 32)" />
      <path
        d="M26 15c10 9 2 25 12 34"
        fill="none"
        stroke="#3A271D"
        strokeWidth="4"
        strokeLinecap="round"
      />
    </svg>
  );
}
