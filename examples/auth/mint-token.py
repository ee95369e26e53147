#!/usr/bin/env python3
"""Mint an HS256 JWT for the auth example, offline, with the standard library.

    JWT_SECRET=... ./mint-token.py [subject] [--ttl SECONDS] [--scope "a b"]
                                   [--audience AUD] [--issuer ISS]

The token is signed with $JWT_SECRET and names the issuer and audience that
bread.yaml requires. A negative --ttl mints an expired token.
"""
import argparse, base64, hashlib, hmac, json, os, sys, time

def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

p = argparse.ArgumentParser()
p.add_argument("subject", nargs="?", default="alice")
p.add_argument("--ttl", type=int, default=3600)
p.add_argument("--scope", default="agents:run")
p.add_argument("--issuer", default="bread-example")
p.add_argument("--audience", default="bread-example")
a = p.parse_args()

secret = os.environ.get("JWT_SECRET")
if not secret:
    sys.exit("mint-token.py: set JWT_SECRET (the same value bread start sees)")
now = int(time.time())
header = {"alg": "HS256", "typ": "JWT"}
claims = {"iss": a.issuer, "aud": a.audience, "sub": a.subject, "scope": a.scope, "iat": now, "exp": now + a.ttl}
if a.ttl < 0:
    claims["iat"] = now + a.ttl - 60
signing = b64(json.dumps(header, separators=(",", ":")).encode()) + "." + b64(json.dumps(claims, separators=(",", ":")).encode())
sig = hmac.new(secret.encode(), signing.encode(), hashlib.sha256).digest()
print(signing + "." + b64(sig))
