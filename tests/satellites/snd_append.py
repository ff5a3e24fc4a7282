"""A speaker for ``wyoming-satellite --snd-command``: appends what it is sent to a file.
python snd_append.py OUT.raw
"""

import sys

with open(sys.argv[1], "ab") as out:
    while chunk := sys.stdin.buffer.read1(65536):
        out.write(chunk)
        out.flush()
