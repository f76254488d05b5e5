// chemmy table console: the player's side of a provably fair shoe
// (docs/guide-fairness.md, "Provably fair shoes"): a fresh secret seed, its SHA-256 commitment, and
// the byte encodings the calls and views use (hex on screen and for
// `chemmy verify`, base64 for bytes in JSON).
//
// SHA-256: crypto.subtle.digest where the browser offers it, else sha256
// below. crypto.subtle exists only in a secure context (https, or
// http://localhost); the console is often served by a gateway on plain
// http at another address (a LAN host), where it is undefined. Skipping
// the commitment there would leave those players' shoes without their
// entropy, so the console carries its own SHA-256 (FIPS 180-4), checked
// against Go's crypto/sha256 by TestConsoleSeedsTheShoe. Hashing needs no
// secret-dependent care here: what is hashed is the seed the player will
// reveal anyway, once the commitments are fixed. The seed itself comes
// only from crypto.getRandomValues, which every context has; without it
// the console commits nothing (never a Math.random seed).
"use strict";

const ChemmyFair = (() => {
  const K = new Uint32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
  ]);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));

  // sha256 is SHA-256 of the bytes data (a Uint8Array), as a Uint8Array.
  function sha256(data) {
    const H = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
    const n = data.length, size = Math.ceil((n + 9) / 64) * 64;
    const m = new Uint8Array(size);
    m.set(data);
    m[n] = 0x80;
    const dv = new DataView(m.buffer);
    dv.setUint32(size - 8, Math.floor(n / 0x20000000)); // the length in bits, 64-bit big-endian
    dv.setUint32(size - 4, (n * 8) >>> 0);
    const w = new Uint32Array(64);
    for (let off = 0; off < size; off += 64) {
      for (let i = 0; i < 16; i++) w[i] = dv.getUint32(off + 4 * i);
      for (let i = 16; i < 64; i++) {
        const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
        const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
      }
      let [a, b, c, d, e, f, g, h] = H;
      for (let i = 0; i < 64; i++) {
        const t1 = (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i]) | 0;
        const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
        h = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
      }
      H[0] += a; H[1] += b; H[2] += c; H[3] += d; H[4] += e; H[5] += f; H[6] += g; H[7] += h;
    }
    const out = new Uint8Array(32);
    const odv = new DataView(out.buffer);
    for (let i = 0; i < 8; i++) odv.setUint32(4 * i, H[i]);
    return out;
  }

  const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  const fromHex = (s) => new Uint8Array((s.match(/../g) || []).map((h) => parseInt(h, 16)));
  const base64 = (bytes) => btoa(String.fromCharCode(...bytes));
  // hexOfBase64 reads bytes of a JSON view (base64, standard or URL-safe)
  // as hex; "" for none or for what is not base64.
  function hexOfBase64(s) {
    if (!s) return "";
    try {
      return hex(Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (ch) => ch.charCodeAt(0)));
    } catch (e) {
      return "";
    }
  }

  // commitmentOf is the hex SHA-256 of the seed's text (its UTF-8 bytes,
  // as table-svc hashes RevealSeed's seed).
  async function commitmentOf(seed) {
    const data = new TextEncoder().encode(seed);
    if (globalThis.isSecureContext && globalThis.crypto && crypto.subtle) {
      try {
        return hex(new Uint8Array(await crypto.subtle.digest("SHA-256", data)));
      } catch (e) { /* the console's own below */ }
    }
    return hex(sha256(data));
  }

  const canSeed = () => !!(globalThis.crypto && crypto.getRandomValues);

  // freshSeed is 32 random bytes from crypto.getRandomValues, as 64 hex
  // digits (the seed's text is what is revealed and hashed).
  function freshSeed() {
    const b = new Uint8Array(32);
    crypto.getRandomValues(b);
    return hex(b);
  }

  return { sha256, hex, fromHex, base64, hexOfBase64, commitmentOf, canSeed, freshSeed };
})();
