import { execFile } from "node:child_process";
import { createHash, X509Certificate } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * A self-signed certificate for the balancer's HTTPS, made at start: a
 * browser speaks HTTP/2 only over TLS, and HTTP/2 is what lets a lab storm
 * have all its requests in flight at once (over HTTP/1.1 Chromium opens at
 * most 6 connections to one server and queues the rest).
 */
export interface TlsCertificate {
  /** The certificate alone (PEM): what a client is told to trust. */
  certFile: string;
  /** Certificate and private key in one PEM file, as HAProxy's `crt` takes them. */
  pemFile: string;
  /**
   * SHA-256 of the certificate's public key, base64: Chromium trusts it
   * without installing anything with `--ignore-certificate-errors-spki-list`.
   */
  spkiSha256: string;
}

/** Valid for localhost and 127.0.0.1, for 30 days: a new one is made at every start. */
export async function makeLocalCertificate(dir: string): Promise<TlsCertificate> {
  const certFile = path.join(dir, "shop.crt");
  const keyFile = path.join(dir, "shop.key");
  const pemFile = path.join(dir, "shop.pem");
  await run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-days",
    "30",
    "-subj",
    "/CN=OncePay local cluster",
    "-addext",
    "subjectAltName=DNS:localhost,IP:127.0.0.1",
    "-keyout",
    keyFile,
    "-out",
    certFile,
  ]);
  const [cert, key] = await Promise.all([readFile(certFile, "utf8"), readFile(keyFile, "utf8")]);
  await writeFile(pemFile, cert + key, { mode: 0o600 });
  const spki = new X509Certificate(cert).publicKey.export({ type: "spki", format: "der" });
  return {
    certFile,
    pemFile,
    spkiSha256: createHash("sha256").update(spki).digest("base64"),
  };
}
