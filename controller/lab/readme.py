"""The texts of the lab package: its README (every file, how it was made, how to reproduce it),
the scaling written out, the HMAC's recipe and the journal's verify commands."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from controller.config.profile import Profile
from controller.lab.info import Captures, FinalCapture, JournalSection, PackageInfo, ProgramSection
from controller.lab.ranges import DrawRange

__all__ = ["hmac_text", "journal_verify_text", "scaling_text", "source_text", "text"]


def source_text(rng: Captures, kernel: str) -> str:
    """``rng/source.md``: where the bytes come from and how the generator is seeded."""
    paragraphs = [
        "The certified RNG draws from the operating system's CSPRNG (`os.urandom`: the Linux"
        f" kernel's generator; this package was made on kernel {kernel}). It is seeded by the"
        " kernel from its own entropy sources (interrupt and timer jitter, and the CPU's or the"
        " board's hardware generator where there is one), events no one at the table controls"
        " (N.J.A.C. 13:69E-1.28G(b)5), and the kernel keeps reseeding it while the table runs,"
        " between games as during them ((b)4). The program never seeds it, keeps no generator"
        " state of its own and takes no seed from a clock, a file or a person: there is nothing"
        " to set or to read.",
        "Before its first draw the generator asks the kernel whether its generator is"
        " initialised (`getrandom` without blocking) and refuses to draw until it is (docs/rng.md"
        ' "Source and readiness"); every byte it takes is health-tested (SP 800-90B 4.4;'
        f" monitors: {', '.join(rng['monitors'])}; {rng['hwrng']}), and a failure stops draws"
        " until a technician's self-test passes. Its start-up test for this package:"
        f" {rng['self_test']}.",
        "The hardware generator's bytes, where monitored, are read only to test the generator;"
        " the draws take the kernel's bytes, into which the kernel mixes it.",
    ]
    body = "\n\n".join(textwrap.fill(p, width=92, break_on_hyphens=False) for p in paragraphs)
    return f"# Source and seeding\n\n{body}\n"


def scaling_text(finals: Sequence[FinalCapture]) -> str:
    """``rng/scaling.md``: how raw bytes become outcomes, per range captured."""
    lines = [
        "# Scaling: raw bytes to outcomes",
        "",
        "The certified RNG scales by rejection sampling with a fixed byte use, never a modulo, so",
        "every outcome of a range is equally probable (N.J.A.C. 13:69E-1.28G(b)6) and a lab can",
        "replay raw bytes into the outcomes (`controller/rng/certified.py`, docs/rng.md",
        '"Scaling"). For outcomes LOW..HIGH:',
        "",
        "1. n = HIGH - LOW + 1; k = the bit length of n - 1 (the bits that hold 0..n-1).",
        "2. An attempt takes the next ceil(k / 8) bytes from the source and reads them as one",
        "   big-endian integer; it keeps the low k bits (a mask of 2^k - 1).",
        "3. A value >= n is rejected: the next attempt takes the next bytes. Otherwise the",
        "   outcome is LOW + value.",
        "4. Every byte an outcome consumed, rejected attempts included, is kept in order (the",
        "   table journals them with the draw), so the raw bytes replay into the outcomes.",
        "5. After 128 rejected attempts in a row (probability below 2^-128 for a working source)",
        "   the generator faults instead of drawing.",
        "",
        "| range | k | bytes per attempt | rejected values | P(reject) | mean bytes per outcome |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for f in finals:
        k, width = int(f["bits"]), int(f["bytes_per_attempt"])
        n = int(f["high"]) - int(f["low"]) + 1
        reject = (2**k - n) / 2**k
        rejected = "none" if n == 2**k else f"{n}..{2**k - 1} (the low {k} bits)"
        mean = width / (1 - reject)
        lines.append(f"| {f['range']} | {k} | {width} | {rejected} | {reject:.4f} | {mean:.4f} |")
    lines += [
        "",
        "`replay.py` (beside this file; standard library only) applies exactly these steps:",
        "",
        "```sh",
    ]
    lines += [
        f"python3 -I -S rng/replay.py {f['raw']} {f['low']} {f['high']} --check {f['outcomes']}"
        for f in finals
    ]
    lines += [
        "```",
        "",
        "Each final capture's `.raw` file holds the bytes its draws consumed; `lab verify` runs",
        "these commands. `rng/raw.bin` is a separate capture of the source before any scaling;",
        "`python3 -I -S rng/replay.py rng/raw.bin LOW HIGH` scales it the same way for any range",
        "(it may end inside an attempt: the script then says so after the whole outcomes).",
        "",
    ]
    return "\n".join(lines)


def hmac_text(section: ProgramSection, profile: Profile) -> str:
    """``program/hmac.txt``: the seed, the HMAC, and how to recompute it from the artifact."""
    top = str(section["profile_files"][-1]).removeprefix("profile/")
    seed_from = (
        "given on the command line"
        if section["seed_given"]
        else "chosen at random when the package was made (printed then)"
    )
    return "\n".join(
        [
            "# The program's HMAC for a seed",
            "",
            f"seed: {section['seed']} ({seed_from})",
            f"hmac-sha256: {section['hmac']} over {section['hmac_files']} files"
            f" ({section['kind']} at {section['root']}, then the profile {profile.name}'s files)",
            "",
            "Recompute it offline from the release artifact you approved, with the profile files",
            "this package carries (settings/profile/):",
            "",
            f"    python -m controller.program.manifest hmac {section['seed']} \\",
            f"        table-controller-VERSION-ARCH.tar.gz --profile-of settings/profile/{top}",
            "",
            "(`table-controller manifest hmac ...` is the same tool.) The computation, so it can",
            'be written independently (docs/program-verification.md, "The lab\'s HMAC"):',
            "",
            "1. Files in order: every file of the install root (the artifact's top folder),",
            "   manifest.json and release.json included, named by their path relative to it and",
            "   sorted by the UTF-8 bytes of the name; then the profile's files, named `profile/`",
            "   plus their path relative to the profile's folder, sorted the same way.",
            "2. Message: for each file its name in UTF-8, one zero byte, its length as 8 bytes",
            "   big-endian, its bytes.",
            "3. HMAC-SHA256 with the seed's bytes as the key, in lower-case hex.",
            "",
            "The same seed typed at the table's console (`verify SEED`) prints the same value",
            "while the table runs the approved program and profile.",
            "",
        ]
    )


def journal_verify_text(section: JournalSection) -> str:
    """``journal/verify.txt``: the exact commands that check the journal with its public key."""
    lines = ["# Verifying the journal (no secret needed)", ""]
    if section.get("export"):
        lines += [
            "The export in this package (every live row up to the newest signed head, closed by",
            "that head):",
            "",
            f"    table-controller journal verify --archive {section['export']} \\",
            f"        --pubkey {section['public_key']}",
            "",
        ]
    lines += [
        "The table's journal itself, where it lives (on the table, or a copy of its state",
        "directory):",
        "",
        f"    table-controller journal verify --state-dir {section['state_dir']} \\",
        f"        --pubkey {section['public_key']}",
        "",
        f"The key id is {section['key_id']}: compare it with the one recorded when the table was",
        "commissioned (`table-controller journal pubkey`).",
        "",
    ]
    return "\n".join(lines)


def _files_table(rows: Sequence[tuple[str, str, str]]) -> list[str]:
    out = ["| file | what it is | how it was made; how to reproduce it |", "| --- | --- | --- |"]
    out += [f"| `{f}` | {what} | {how} |" for f, what, how in rows]
    return out


def text(info: PackageInfo, ranges: Sequence[DrawRange], *, meters: bool) -> str:
    """The package's README.md, from what was made (``package.json``'s content)."""
    rng, program, settings = info["rng"], info["program"], info["settings"]
    journal, tests = info["journal"], info["tests"]
    finals = rng["final"]
    raw_bytes = rng["raw"]["bytes"]
    draws = finals[0]["count"] if finals else 0
    ranges_text = ", ".join(f"{r.label} ({r.reference})" for r in ranges) or "none"
    lines = [
        f"# Lab package: table {info['table']} ({info['game']}, profile {info['profile']})",
        "",
        f"Made {info['made']} by `{info['made_by']}`. Program: {program['kind']}"
        f" {program['version']}. Signed by {info['signed_by']['who']}"
        f" (key {info['signed_by']['key_id']}).",
        "",
        "One command checks all of it, offline:",
        "",
        "    table-controller lab verify THIS-FOLDER [--pubkey TABLE-PUBLIC-KEY.pem]",
        "",
        "It checks the signature and every file's SHA-256, replays each raw capture into its",
        "outcomes with `rng/replay.py` run by `python3 -I -S` (the standard library only),",
        "re-runs the statistics and compares them with `rng/statistics.json`, and verifies the",
        "journal export with the table's public key; it exits 0 only if all of that holds and",
        "names the first problem otherwise. Without this program:",
        "",
        "    sha256sum -c SHA256SUMS",
        "    openssl dgst -sha256 -verify signing-key.pem -signature SHA256SUMS.sig SHA256SUMS",
        "",
        "## The seal",
        "",
        *_files_table(
            [
                (
                    "SHA256SUMS",
                    "the SHA-256 of every other file of the package",
                    "written last, in `sha256sum` format",
                ),
                (
                    "SHA256SUMS.sig",
                    "ECDSA P-256 / SHA-256 signature of SHA256SUMS (DER)",
                    f"signed by {info['signed_by']['who']}"
                    + (
                        ": the package is bound to the device that signs the journal"
                        if info["signed_by"]["table_key"]
                        else ": not the table's key"
                        + ("; the journal export is still signed by the table" if journal else "")
                    ),
                ),
                ("signing-key.pem", "the signing key's public half", "from the signer"),
                (
                    "package.json",
                    "what was made, by whom and when, and every figure below",
                    "written by the package",
                ),
            ]
        ),
        "",
        "## The RNG (rng/)",
        "",
        f"Source: the kernel's CSPRNG through the certified path, {rng['hwrng']}; health tests"
        f" on every byte ({', '.join(rng['monitors'])}). Start-up test: {rng['self_test']}.",
        f"Ranges captured: every range the shipped profiles draw from: {ranges_text}.",
        "",
        *_files_table(
            [
                (
                    "rng/raw.bin",
                    f"{raw_bytes:,} raw bytes before any scaling",
                    "read through `CertifiedRng.read_raw`, 256 bytes at a time, every byte"
                    " health-tested as production's (`python -m controller.rng.lab capture raw"
                    " M FILE` makes another)",
                ),
                *[
                    (
                        f["outcomes"],
                        f"{f['count']:,} outcomes {f['range']}, one per line: {f['what']}"
                        f" ({f['reference']})",
                        "drawn with `CertifiedRng.draw_with_raw`, the production draw path"
                        " (`python -m controller.rng.lab capture final N FILE --raw-out RAW"
                        f" --range {f['range']}` makes another)",
                    )
                    for f in finals
                ],
                *[
                    (
                        f["raw"],
                        f"the {f['raw_bytes']:,} raw bytes the outcomes of {f['range']}"
                        " consumed, rejected attempts included",
                        f"written with each draw; `python3 -I -S rng/replay.py {f['raw']}"
                        f" {f['low']} {f['high']}` gives the outcomes again",
                    )
                    for f in finals
                ],
                (
                    "rng/replay.py",
                    "the scaling as a standalone script (standard library only)",
                    "a copy of controller/lab/replay.py",
                ),
                ("rng/scaling.md", "the scaling written out, per range", "written"),
                (
                    "rng/source.md",
                    "where the bytes come from and how the generator is seeded",
                    "written (docs/rng.md)",
                ),
                (
                    "rng/statistics.txt, rng/statistics.json",
                    f"{rng['tests']['passed']} of {rng['tests']['run']} tests pass at 99%:"
                    " frequency chi-square, serial pairs, mono-bit and runs for each capture"
                    " (N.J.A.C. 13:69E-1.28G(b)3)",
                    "computed from the files (controller/lab/stats.py); `lab verify` computes"
                    " them again",
                ),
                (
                    "rng/health.txt",
                    "the SP 800-90B health tests' cutoffs and their false-alarm arithmetic",
                    "`python -m controller.rng.health` (docs/rng.md)",
                ),
                ("rng/captures.json", "the captures, their ranges and sizes", "written"),
            ]
        ),
        "",
        "At 99% a perfect generator fails each test one time in a hundred; see",
        "rng/statistics.txt for how many failures chance alone explains.",
        "",
        "## The program (program/)",
        "",
        *_files_table(
            [
                (
                    "program/identity.json",
                    f"{program['kind']} {program['version']}: release and manifest hashes, the"
                    " check of every file against the manifest, the seed and the HMAC",
                    "read from the running program's install root",
                ),
                (
                    "program/manifest.json",
                    "the manifest: the SHA-256 of every program file",
                    "the release's own"
                    if program["kind"] == "release"
                    else "made now from the development tree's files (it has no release)",
                ),
                (
                    "program/hmac.txt",
                    f"HMAC-SHA256 {program['hmac'][:16]}... for seed {program['seed'][:16]}...",
                    "`verify SEED` at the console gives the same; the file says how to"
                    " recompute it offline from the release artifact",
                ),
            ]
            + (
                [("program/release.json", "what went into the release", "the release's own")]
                if program["kind"] == "release"
                else []
            )
        ),
        "",
        "## Settings (settings/)",
        "",
        *_files_table(
            [
                (
                    "settings/profile.txt",
                    "the profile in force: every value and the file it came from",
                    "`table-controller check-profile PROFILE`",
                ),
                (
                    "settings/profile-settings.md",
                    "every profile setting: its type, range, default and reference",
                    "from the settings' declarations (docs/configuration.md has the same tables)",
                ),
                (
                    "settings/profile/",
                    "the profile's files, as the table reads them",
                    "copied; their seal: " + "; ".join(settings["seal"]),
                ),
                (
                    "settings/rules.txt",
                    "every rule setting: value, default, range, regulation reference",
                    f"{settings['rules_from']}; the console's `config show` prints the same",
                ),
                (
                    "settings/events.md",
                    "the event catalogue: each coded event's severity, what raises and clears"
                    " it, its reference",
                    "from the program's catalogue (docs/events.md has the same table)",
                ),
                *(
                    [
                        (
                            "settings/meters.txt, settings/meters.json",
                            "the meters, lifetime and this shift",
                            "counted from the state directory's journal and archive, as"
                            " `table-controller meters --state-dir DIR [--json]` counts them",
                        )
                    ]
                    if meters
                    else []
                ),
            ]
        ),
        "",
    ]
    if not meters:
        lines += [
            "The meters are absent: the package was made without a state directory (`--state-dir"
            " DIR` adds them).",
            "",
        ]
    lines += ["## The journal (journal/)", ""]
    if journal is None:
        lines += [
            "Absent: the package was made without a state directory (`--state-dir DIR` adds the",
            "last rounds' recall, the signed journal export and the public key).",
            "",
        ]
    else:
        export = journal.get("export")
        lines += [
            f"Read from {journal['state_dir']}: {journal['how']}. Nothing was written there.",
            "",
            *_files_table(
                [
                    (
                        export or "(no export)",
                        f"every live row {journal['rows']['first']} to the newest signed head"
                        + (f" (row {journal['head']['seq']})" if export else "")
                        + ", closed by that head"
                        if export
                        else "the journal has no signed head yet",
                        "the archive segment format; `table-controller journal verify"
                        f" --archive {export} --pubkey journal/table.pub.pem`",
                    ),
                    (
                        "journal/unsigned-tail.jsonl",
                        f"{journal['tail']['rows']} rows after that head, not yet signed (a"
                        " live table signs them within a minute)",
                        "the rows as `journal export` writes them; they chain from the head",
                    ),
                    (
                        "journal/recall.txt, journal/recall.jsonl",
                        f"the last {journal['recall']['rounds']} rounds (recall_depth"
                        f" {journal['recall']['depth']}) with every journaled input",
                        "`recall N` at the console; `table-controller journal export --rounds N`",
                    ),
                    (
                        "journal/table.pub.pem",
                        f"the table's public key (key id {journal['key_id']})",
                        "`table-controller journal pubkey`",
                    ),
                    (
                        "journal/verify.txt",
                        "the exact `journal verify` commands",
                        "written",
                    ),
                ]
                + (
                    [("journal/journal.anchor", "the anchor: the newest signed heads", "copied")]
                    if journal.get("anchor")
                    else []
                )
            ),
            "",
        ]
    lines += ["## The test suite (tests/)", ""]
    if tests["absent"]:
        lines += ["Absent: " + tests["absent"], ""]
    else:
        lines += [
            f"`tests/summary.txt`: {tests['total']:,} tests by area and every rules check;"
            f" `tests/collected.json`: each test's id and docstring. {tests['how']}.",
            "",
        ]
    lines += [
        "## Documentation (docs/)",
        "",
        "The pages a lab reads: " + ", ".join(f"`{d}`" for d in info["docs"]) + ".",
        "",
        "## Reproducing the package",
        "",
        "    table-controller lab package OUT --profile PROFILE [--state-dir DIR]"
        f" [--draws {draws}] [--raw-bytes {raw_bytes}] [--seed SEED] [--key LAB-KEY.pem]",
        "",
        "Fresh captures differ (they are random); everything else is the same for the same",
        "program, profile, journal and seed.",
        "",
    ]
    return "\n".join(lines)
