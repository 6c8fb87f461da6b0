"""Reading user text safely: uploaded bytes in, a ``str`` or a precise error out.

(Saving and exporting tokenizers lives with each tokenizer class; this module
is about the text a user gives.)
"""

from __future__ import annotations

MAX_UPLOAD_BYTES = 64 * 1024 * 1024
"""Largest upload the app accepts: 64 MiB (bytes)."""


def decode_text_upload(data: bytes, filename: str = "upload", max_bytes: int = MAX_UPLOAD_BYTES) -> str:
    """Decode an uploaded file's bytes as UTF-8 text, or explain why not.

    Args:
        data: the file's bytes (never a path).
        filename: shown in messages.
        max_bytes: size cap in bytes.

    Returns:
        The text (a leading UTF-8 byte-order mark is dropped).

    Raises:
        TypeError: ``data`` is not bytes.
        ValueError: the file is empty, larger than ``max_bytes``, looks binary
            (NUL bytes in the first 8 KiB together with invalid UTF-8), or is not
            valid UTF-8 -- the message gives the byte offset and, for text that
            decodes as Latin-1/Windows-1252, says so.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"upload must be bytes, got {type(data).__name__}")
    data = bytes(data)
    if len(data) == 0:
        raise ValueError(f"{filename} is empty (0 bytes): there is no text to tokenize")
    if len(data) > max_bytes:
        raise ValueError(
            f"{filename} is {len(data) / 2**20:.1f} MiB, over the {max_bytes / 2**20:.0f} MiB upload limit; "
            "use a smaller file, or train on the whole file with `python -m bpe_core train`"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        head = data[:8192]
        if b"\x00" in head:
            raise ValueError(
                f"{filename} looks like a binary file (it contains NUL bytes and is not UTF-8 text); "
                "upload a plain .txt file"
            ) from None
        hint = ""
        try:
            data.decode("cp1252")
            hint = " It decodes as Latin-1/Windows-1252: re-save it as UTF-8 and upload it again."
        except UnicodeDecodeError:
            pass
        raise ValueError(
            f"{filename} is not valid UTF-8: byte 0x{data[exc.start]:02X} at offset {exc.start} "
            f"cannot start or continue a character.{hint}"
        ) from None
    return text.removeprefix("\ufeff")
