#!/usr/bin/env python3
"""`synchat server --tls-cert --tls-key` judged by sslyze (PyPI), which nobody here wrote,
against Mozilla's "intermediate" TLS configuration: protocol versions, cipher suites (forward
secrecy, AEAD only), curves, the certificate (path validation with the CA given, key usage,
signature, lifespan), and the old attacks (ROBOT, Heartbleed, CCS injection, renegotiation,
compression, fallback SCSV, extended master secret). The CA and the certificate are made by
the recipe of docs/server.md's TLS section, run as written. Loopback only. Run by .ci/run
after the build, with the Python that has sslyze (it pins a cryptography of its own, so it
lives in a virtual environment):

    python3 -m venv .build/sslyze && .build/sslyze/bin/pip install -q sslyze==6.2.0
    .build/sslyze/bin/python TestData/conformance/tls_judge.py .build/debug/synchat

Exit code 0 when sslyze says `OK - Compliant`.
"""
import os
import re
import subprocess
import sys
import tempfile

BINARY = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/debug/synchat")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def recipe():
    """The shell lines of docs/server.md's TLS recipe that make the CA and the certificate:
    its code block up to the first line that runs synchat."""
    text = open(os.path.join(ROOT, "docs", "server.md"), encoding="utf-8").read()
    block = re.search(r"## TLS\n.*?```sh\n(.*?)```", text, re.S).group(1)
    lines = []
    for line in block.replace("\\\n", " ").splitlines():
        if line.startswith("synchat") or line.startswith("curl"):
            break
        lines.append(line)
    return "\n".join(lines)


def main():
    with tempfile.TemporaryDirectory(prefix="synchat-tls-judge-") as dir:
        made = subprocess.run(["sh", "-e", "-c", recipe()], cwd=dir, capture_output=True, text=True)
        if made.returncode != 0:
            print(f"FAIL  the docs' recipe did not run: {made.stderr[-400:]}")
            sys.exit(1)
        # sslyze is one address opening hundreds of TLS connections in seconds (a suite at a
        # time, then ROBOT's probes): what --peer-rate refuses before the handshake. The judge
        # is of the TLS configuration, so the limit is set out of its reach.
        server = subprocess.Popen([BINARY, "server", "--port", "0", "--open", "--contacts", "1", "--traffic", "0/h", "--peer-rate", "100000",
                                   "--tls-cert", os.path.join(dir, "server.pem"), "--tls-key", os.path.join(dir, "server.key")],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            line = server.stdout.readline()
            port = int(re.search(r"127\.0\.0\.1:(\d+)", line).group(1))
            judged = subprocess.run([sys.executable, "-m", "sslyze", "--certinfo_ca_file", os.path.join(dir, "ca.pem"),
                                     "--mozilla_config=intermediate", f"127.0.0.1:{port}"],
                                    capture_output=True, text=True, timeout=240)
        finally:
            server.terminate()
            server.wait(timeout=10)
    verdict = [l.strip() for l in judged.stdout.splitlines() if f"127.0.0.1:{port}:" in l]
    compliant = judged.returncode == 0 and any(l.endswith("OK - Compliant.") for l in verdict)
    shown = ("Cipher Suites:", "rejected all", "accepted the following", "TLS_", "Forward Secrecy", "Supported curves", "Supplied CA file",
             "Verified Chain:", "Downgrade", "TLS_FALLBACK_SCSV", "Heartbleed", "ROBOT", "Compression", "Extended Master Secret")
    for l in judged.stdout.splitlines():
        if any(w in l for w in shown) and "SNI" not in l:
            print("      " + l.strip())
    print(("ok    " if compliant else "FAIL  ") + f"sslyze --mozilla_config=intermediate: {verdict or judged.stdout[-600:]} {judged.stderr[-300:]}")
    sys.exit(0 if compliant else 1)


if __name__ == "__main__":
    main()
