import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium, expect, test, type Browser, type Page } from "@playwright/test";
import { startHaproxy, type Balancer } from "@/lib/cluster/haproxy";
import { makeLocalCertificate, type TlsCertificate } from "@/lib/cluster/tls-certificate";
import type { LabStrategy } from "@/lib/lab/strategies";
import { freePort } from "@/lib/process/free-port";
import { waitUntil } from "@/lib/process/process-group";
import { closeDatabase } from "@/lib/testing/e2e/database";
import { E2E_SIMULATOR_ADMIN_KEY_FILE, e2eSimulatorPort } from "@/lib/testing/e2e/paths";
import { chooseStormSize, recorded } from "./lab-page";

/**
 * A lab storm through the balancer, as `npm run cluster` serves the shop:
 * HAProxy in front of the app, on plain HTTP and on HTTPS with a certificate
 * made at start. Over HTTPS Chromium and HAProxy agree on HTTP/2 and every
 * request of a storm of 50 is on the wire at once; over HTTP/1.1, through
 * the same balancer, Chromium's 6 connections per server hold the rest
 * back. The browser trusts the certificate the way the cluster's printout
 * says (`--ignore-certificate-errors-spki-list`), not by ignoring errors.
 */
const STORM = 50;

let workDir: string;
let certificate: TlsCertificate;
let balancer: Balancer;

test.beforeAll(async ({ baseURL }) => {
  workDir = await mkdtemp(path.join(tmpdir(), "oncepay-e2e-balancer-"));
  certificate = await makeLocalCertificate(workDir);
  balancer = await startHaproxy({
    port: await freePort(),
    statsPort: await freePort(),
    instances: [{ name: "app1", port: Number(new URL(baseURL!).port) }],
    tls: { port: await freePort(), pemFile: certificate.pemFile },
    workDir,
    output: () => undefined,
  });
  // In rotation once its checks say the app is ready.
  await waitUntil(async () => (await fetch(`${balancer.url}/api/ready`)).ok, {
    timeoutMs: 15_000,
    process: balancer.process,
    describe: () => "The balancer never put the app in rotation",
  });
});

/**
 * The payment simulator's answer delay (its fault settings, which every
 * account shares: set for one storm and put back). A real provider takes
 * hundreds of milliseconds; the simulator answers in a few, and then the
 * first answers of a storm can come back while the browser is still sending
 * its last requests (it hands them to the network one by one, a
 * millisecond or two each on this machine).
 */
async function setProviderLatency(baseURL: string, latencyMs: number): Promise<void> {
  const simulator = `http://127.0.0.1:${e2eSimulatorPort(Number(new URL(baseURL).port))}`;
  const adminKey = (await readFile(E2E_SIMULATOR_ADMIN_KEY_FILE, "utf8")).trim();
  const response = await fetch(`${simulator}/_simulator/faults`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${adminKey}`, "Content-Type": "application/json" },
    body: JSON.stringify({ latencyMs }),
  });
  expect(response.status).toBe(200);
}

test.afterAll(async () => {
  await balancer?.stop();
  await rm(workDir, { recursive: true, force: true });
  await closeDatabase();
});

async function browserTrustingTheCertificate(browserType: typeof chromium): Promise<Browser> {
  const { launchOptions } = test.info().project.use;
  return browserType.launch({
    ...launchOptions,
    args: [
      ...(launchOptions?.args ?? []),
      `--ignore-certificate-errors-spki-list=${certificate.spkiSha256}`,
    ],
  });
}

/** One storm from the lab page; what the page measured, and the storm's id. */
async function stormFromLab(page: Page, origin: string, strategy: LabStrategy) {
  await page.goto(`${origin}/lab`);
  await chooseStormSize(page, STORM);
  const row = page.getByTestId(`lab-row-${strategy}`);
  const before = (await row.getAttribute("data-storm-id")) ?? "";
  await row.getByTestId(`lab-run-${strategy}`).click();
  await expect(row).not.toHaveAttribute("data-storm-id", before, { timeout: 60_000 });
  return {
    stormId: (await row.getAttribute("data-storm-id"))!,
    peak: Number(await row.getByTestId("lab-peak").textContent()),
    protocol: (await row.getByTestId("lab-protocol").textContent())!.trim(),
  };
}

// Every request of a storm without a key charges the provider, and the
// provider takes a second, as a slow real one can: what the page measures
// is then what HTTP/2 lets the browser send, not how fast the server is.
test("lab through the balancer over HTTPS: HTTP/2 puts all 50 requests of a storm on the wire at once", async ({
  baseURL,
}) => {
  const browser = await browserTrustingTheCertificate(chromium);
  try {
    const page = await (await browser.newContext()).newPage();
    await setProviderLatency(baseURL!, 1000);
    const unsafe = await stormFromLab(page, balancer.tlsUrl!, "no_key").finally(() =>
      setProviderLatency(baseURL!, 0),
    );
    await page
      .getByTestId("lab-row-no_key")
      .screenshot({ path: test.info().outputPath("lab-http2.png") });
    expect(unsafe.protocol).toBe("over HTTP/2");
    expect(unsafe.peak).toBe(STORM);
    expect(await recorded(unsafe.stormId)).toMatchObject({ orders: STORM, charges: STORM });

    // The real checkout over HTTP/2: still one order and one charge.
    const safe = await stormFromLab(page, balancer.tlsUrl!, "atomic_claim");
    expect(safe.protocol).toBe("over HTTP/2");
    expect(await recorded(safe.stormId)).toMatchObject({ orders: 1, charges: 1 });
  } finally {
    await browser.close();
  }
});

test("lab through the balancer over plain HTTP: HTTP/1.1 holds a storm of 50 to 6 on the wire at once", async ({
  page,
}) => {
  await page.setViewportSize({ width: 390, height: 844 });
  const shown = await stormFromLab(page, balancer.url, "no_key");
  await page
    .getByTestId("lab-row-no_key")
    .screenshot({ path: test.info().outputPath("lab-http1-phone.png") });
  expect(shown.protocol).toBe("over HTTP/1.1");
  expect(shown.peak).toBeLessThanOrEqual(6);
  expect(await recorded(shown.stormId)).toMatchObject({ orders: STORM, charges: STORM });
});
