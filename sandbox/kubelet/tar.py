"""`tar` in a simulated container: the half of `kubectl cp` that runs inside the pod.

kubectl 1.37 copies with tar over exec (measured against the sandbox): `kubectl cp ./f
ns/pod:/tmp/x` first runs `test -d /tmp/x`, then `tar -xmf - -C /tmp` with a tar stream on
stdin whose member is named `x`; `kubectl cp ns/pod:/etc/config/key ./out` runs `tar cf -
/etc/config/key` and reads the stream from stdout. So `tar` here creates to stdout and extracts
from stdin (`-f -`), with `-c`/`-x`/`-t`, `-C DIR`, and `-m`, `-v`, `-o`, `-p` accepted and
ignored; an archive file other than `-` and compression are refused with a message.

Archives are built and read with `tarfile` on in-memory bytes only. Extraction writes into the
container's writable layer (`layer`) and follows what a careful tar does: a leading `/` is
stripped from member names, a member whose name has a `..` component is skipped with an error
(exit 1), links and special files are skipped with a message; past the layer's limits it stops
with BusyBox's `tar: write error: No space left on device` (exit 1). Messages are BusyBox's.
"""

from __future__ import annotations

import io as bytesio
import posixpath
import tarfile
from dataclasses import dataclass, field

from sandbox.kubelet.coreutils import Box, Stdio
from sandbox.kubelet.layer import LayerFull, decode, encode


@dataclass
class _Options:
    mode: str = ""  # "c", "x" or "t"
    archive: str = ""
    directory: str = ""
    names: list[str] = field(default_factory=list)
    unsupported: str = ""


def _parse(args: list[str]) -> _Options:
    options = _Options()
    position = 0
    while position < len(args):
        arg = args[position]
        position += 1
        bundled = arg[1:] if arg.startswith("-") and arg != "-" else ""
        if position == 1 and not arg.startswith("-"):
            bundled = arg  # the old style: `tar cf - x`
        if not bundled:
            options.names.append(arg)
            continue
        for letter in bundled:
            if letter in "cxt":
                options.mode = letter
            elif letter in "fC" and position < len(args):
                value = args[position]
                position += 1
                if letter == "f":
                    options.archive = value
                else:
                    options.directory = value
            elif letter in "zjJ":
                options.unsupported = "compressed archives are not simulated by the sandbox"
            elif letter not in "mvop":
                options.unsupported = f"invalid option -- '{letter}'"
    return options


async def tar(args: list[str], io: Stdio, box: Box) -> int:
    options = _parse(args)
    if options.unsupported or not options.mode:
        await io.err(f"tar: {options.unsupported or 'need one of -c, -x or -t'}\n")
        return 1
    if options.archive not in ("-", ""):
        await io.err(
            f"tar: {options.archive}: only '-f -' (stdin or stdout) is simulated by the sandbox\n"
        )
        return 1
    base = box.path(options.directory or ".")
    if not box.is_directory(base):
        await io.err(
            f"tar: can't change directory to '{options.directory}': No such file or directory\n"
        )
        return 1
    if options.mode == "c":
        return await _create(options.names, io, box, base)
    return await _extract(io, box, base, list_only=options.mode == "t")


async def _create(names: list[str], io: Stdio, box: Box, base: str) -> int:
    if not names:
        await io.err("tar: empty archive\n")
        return 1
    buffer = bytesio.BytesIO()
    code, warned = 0, False
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        for name in names:
            if name.startswith("/") and not warned:
                await io.err("tar: removing leading '/' from member names\n")
                warned = True
            full = posixpath.normpath(posixpath.join(base, name))
            if box.read(full) is None and not box.is_directory(full):
                await io.err(f"tar: {name}: No such file or directory\n")
                code = 1
                continue
            _add(archive, box, full, name.lstrip("/") or ".")
    await io.out(decode(buffer.getvalue()))
    return code


def _add(archive: tarfile.TarFile, box: Box, full: str, member: str) -> None:
    info = tarfile.TarInfo(posixpath.normpath(member))
    info.mtime = int(box.now.timestamp())
    info.uname = info.gname = "root"
    text = box.read(full)
    if text is None:
        info.type, info.mode = tarfile.DIRTYPE, 0o755
        archive.addfile(info)
        for entry in box.entries(full):
            _add(archive, box, posixpath.join(full, entry), posixpath.join(member, entry))
        return
    data = encode(text)
    info.size, info.mode = len(data), 0o644
    archive.addfile(info, bytesio.BytesIO(data))


async def _extract(io: Stdio, box: Box, base: str, *, list_only: bool) -> int:
    data = encode(await io.read_all())
    if not data:
        await io.err("tar: short read\n")
        return 1
    try:
        with tarfile.open(fileobj=bytesio.BytesIO(data), mode="r:") as archive:
            return await _extract_members(archive, io, box, base, list_only=list_only)
    except tarfile.TarError:
        await io.err("tar: invalid tar magic\n")
        return 1


async def _extract_members(
    archive: tarfile.TarFile, io: Stdio, box: Box, base: str, *, list_only: bool
) -> int:
    code = 0
    for member in archive.getmembers():
        name = member.name.lstrip("/")
        if list_only:
            await io.out(f"{member.name}\n")
        elif ".." in name.split("/"):
            await io.err(f"tar: {member.name}: member name contains '..', not extracted\n")
            code = 1
        elif not (member.isfile() or member.isdir()):
            await io.err(f"tar: {member.name}: links and special files are not simulated\n")
        else:
            target = posixpath.normpath(posixpath.join(base, name))
            try:
                _write(archive, member, box, target)
            except LayerFull:
                await io.err("tar: write error: No space left on device\n")
                return 1
    return code


def _write(archive: tarfile.TarFile, member: tarfile.TarInfo, box: Box, target: str) -> None:
    if member.isdir():
        box.layer.make_directory(target)
        return
    source = archive.extractfile(member)
    box.layer.write(target, decode(source.read() if source is not None else b""))
