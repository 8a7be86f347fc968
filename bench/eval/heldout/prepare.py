#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Create the held-out victims' input files, owned by nobody, who runs the
victims. Set 1 (the default) in /var/tmp/argus-heldout: text for gzip and xz,
an SQL script of single-row transactions for sqlite3, and a C file for gcc.
Set 2 (--set 2) in /var/tmp/argus-heldout2: text for bzip2, shuffled lines
for sort, and eight 32 MB files for sha1sum. Set 3 (--set 3) in
/var/tmp/argus-heldout3: text for zstd, a tree of 10000 small text files for grep
and tar, a column of numbers for mawk, and a git repository of that tree
packed into one pack file for git grep. Set 4 (--set 4) in
/var/tmp/argus-heldout4: text for lz4 and wc, a 48 MB file for openssl (and
its twin), and two equal trees of 5000 small files for cp and diff. Set 5 (--set 5) in
/var/tmp/argus-heldout5: JSON lines for jq, a 128 MB file that dd reads past the page
cache, text for split, and a zip archive of 5000 small files for unzip. Set 6 (--set 6) in
/var/tmp/argus-heldout6: a small C project for make, text for lzip and, compressed,
for gzip -d, two equal 384 MB files for cmp, and a tree of 120000 empty files for du. Set 7 (--set 7) in
/var/tmp/argus-heldout7: a 256 MB file for md5sum and another for python3 to map, a tar archive of
2000 files and the directory it is extracted into, and 48 MB of lines for shuf and tac. Set 10
(--set 10) in /var/tmp/argus-heldout10, an ext4 file system with a journal made in an image file
(/var/tmp/argus-heldout10.img, on a loop device with direct I/O, so that its writes reach the disk):
a tree of 600 small files for git add, 300 for rsync to copy, and an SQL script of single-row
transactions for sqlite3 in WAL mode; `--set 10 --release` unmounts it and frees the loop device.
Set 11 (--set 11) in /var/tmp/argus-heldout11, an ext4 file system with a journal made likewise in
/var/tmp/argus-heldout11.img: 600 small files for gzip --synchronous, an 8 MB file that sysbench
overwrites, a dump of 60000 records for mdb_load and 512 MB of random bytes for b2sum; `--set 11
--release` as for set 10. Set 12 (--set 12) in /var/tmp/argus-heldout12, a third such file system:
48 MB of text for pigz, lbzip2 and xz, a tar archive of 3000 small files for tar to extract, and a
tree of 600 small files for cp to copy; `--set 12 --release` as for set 10. Set 13 (--set 13) in
/var/tmp/argus-heldout13, on the root file system: 48 MB of text for pbzip2, plzip and zstd, and
500000 shuffled lines for sort. Set 14 (--set 14) in /var/tmp/argus-heldout14, a fourth journaled
file system as set 10's: a tree of 3000 small files for zip, 256 MB of random bytes for shred to
overwrite and 256 MB more for sha512sum to read; `--set 14 --release` as for set 10. Set 15
(--set 15) in /var/tmp/argus-heldout15, a fifth: 384 MB of random bytes for openssl to encrypt, 16
MB of text for perl and 192 MB more for lz4; `--set 15 --release` as for set 10. Set 16
(--set 16) in /var/tmp/argus-heldout16, a sixth: 256 MiB of random bytes for gpg, 512 MiB for
sum and 24 MiB for xxd, 96 MB of text for sed and 160 MB of lines for rev, and a GnuPG home for
nobody; `--set 16 --release` as for set 10. Set 17 (--set 17) in /var/tmp/argus-heldout17, a seventh:
640 MiB of random bytes for cksum, 128 MiB for base64 and 96 MiB for strings, 24 MB of text for
7z and 192 MB for lzop; `--set 17 --release` as for set 10. Set 18 (--set 18) in
/var/tmp/argus-heldout18, an eighth: 640 MiB of random bytes for cat and 32 MiB for od, 96 MB of
text for cut and 48 MB for iconv, and a tree of 6000 files for ls; `--set 18 --release` as for set
10. Set 19 (--set 19) in /var/tmp/argus-heldout19, a ninth: 512 MiB of random bytes for sha256sum,
64 MB of text for tr and nl, two files of 32 MB for paste, and 64 MB of sorted lines for uniq;
`--set 19 --release` as for set 10. Set 20 (--set 20) in /var/tmp/argus-heldout20, a tenth: 512 MiB
of random bytes for sha384sum, 48 MiB for base32, 64 MB of text for fold, 32 MB of tab-separated
text for expand, and two sorted 24 MB files for comm; `--set 20 --release` as for set 10. Set 21
(--set 21) in /var/tmp/argus-heldout21, an eleventh: 384 MiB of random bytes for sha224sum, 48 MB of
text for unexpand and csplit, two sorted 20 MB files with unique keys for join, and an LMDB
environment of about 210 MB in one file for mdb_dump; `--set 21 --release` as for set 10. Set 22
(--set 22) in /var/tmp/argus-heldout22, a twelfth: 48 MB of text for fmt, 144 MB for tee, 3 MB for
ptx, 8 MiB of random bytes for hexdump, and the Tcl script tclsh runs; `--set 22
--release` as for set 10. Set 23 (--set 23) in /var/tmp/argus-heldout23, a thirteenth: numbers for
factor, 96 MB of text for pr, a table of words for column, pairs of names for tsort, and 396 MB of
text for grep, its needle on the last line; `--set 23 --release` as for set 10. Set 24 (--set 24) in
/var/tmp/argus-heldout24, a fourteenth: text with macro calls for m4, a copy of Debian's LLVM 14
library for nm, three versions of 11 MB of text for diff3, a tree of 2000 files for cpio, and an XML
document of about 19 MB for xmllint; `--set 24 --release` as for set 10. Set 25 (--set 25) in
/var/tmp/argus-heldout25, a fifteenth: an XML document and a stylesheet that sorts it for xsltproc,
synthesized 16-bit stereo audio in a WAV file for flac, a copy of OpenSSL's libcrypto for objdump,
a text and a unified diff of it for patch, and a long manual page for groff; `--set 25 --release`
as for set 10. Set 26 (--set 26) in /var/tmp/argus-heldout26, a sixteenth: a tree of 3000 C files
for ctags, a copy of Debian's LLVM 14 library for readelf and strip, 320 MiB of random bytes for
rhash, and a Lua script; `--set 26 --release` as for set 10. Set 27 (--set 27) in
/var/tmp/argus-heldout27, a seventeenth: a tree of 8000 text files for rg, 57 MB of text for gawk,
43 MB for brotli, synthesized audio in a WAV file for sox, and a generated C file for clang;
`--set 27 --release` as for set 10. Set 28 (--set 28) in /var/tmp/argus-heldout28, an
eighteenth: synthesized audio in a WAV file for oggenc, a picture of random pixels for cjpeg, a
generated C file for clang-format, a tree of C files for cppcheck and a table for datamash;
`--set 28 --release` as for set 10. Set 29 (--set 29) in /var/tmp/argus-heldout29, a
nineteenth: a tree of 500 text files for file, and generated C++, Java and Fortran sources for
g++, javac and gfortran; `--set 29 --release` as for set 10. Set 30 (--set 30) in
/var/tmp/argus-heldout30, a twentieth: generated assembly for as, a PostScript page of random
curves for gs, a picture for ImageMagick's convert, and 24 MB of text and a script of
substitutions for ed; `--set 30 --release` as for set 10. Set 31 (--set 31) in
/var/tmp/argus-heldout31, a twenty-first: generated Python modules for python3's compileall, a
picture for netpbm's pnmscale, a tree of small files that mke2fs copies into a new image, and text
for gzip run under valgrind; `--set 31 --release` as for set 10. Set 32 (--set 32) in
/var/tmp/argus-heldout32, a twenty-second: a JPEG picture for djpeg, a tree of small files for ar,
and a Java class for java to run; `--set 32 --release` as for set 10. Set 33 (--set 33) in
/var/tmp/argus-heldout33, a twenty-third: a generated COBOL program for cobc, a catalog of
translated messages for msgfmt, a CMake script for cmake's interpreter and synthesized audio in an
Ogg Vorbis file for oggdec; `--set 33 --release` as for set 10. Set 34 (--set 34) in
/var/tmp/argus-heldout34, a twenty-fourth: random bytes for shasum, a package's tree for
dpkg-deb and an image of an ext4 file system holding 300000 tiny files for e2fsck;
`--set 34 --release` as for set 10. Set 35 (--set 35) in /var/tmp/argus-heldout35, a
twenty-fifth: a generated C file for clang-tidy, a generated Ada program for gnatmake and a
script of arithmetic for gdb's command interpreter; `--set 35 --release` as for set 10. Set 36
(--set 36) in /var/tmp/argus-heldout36, a twenty-sixth: a copy of Debian's LLVM 14 library for
llvm-readobj and llvm-objcopy, and 256 MiB of random bytes and text for llvm-strings; `--set 36
--release` as for set 10. Set 37 (--set 37) in /var/tmp/argus-heldout37, a twenty-seventh: a message
catalog and an older translation of it for msgmerge, LLVM 14's mangled names for c++filt, and the
directory initdb makes a database cluster in; `--set 37 --release` as for set 10. Set 38 (--set 38)
in /var/tmp/argus-heldout38, a twenty-eighth: byte counts for numfmt, a JPEG of random pixels for
jpegtran, and a tree of 10000 small files that ls lists under strace; `--set 38 --release` as for set
10. Set 39 (--set 39) in /var/tmp/argus-heldout39, a twenty-ninth: text for vim to edit and write, and
the directory mariadb-install-db makes a data directory in; `--set 39 --release` as for set 10. Set
40 (--set 40) in /var/tmp/argus-heldout40, a thirtieth: a PNG for optipng, a WAV for lame and text
for zopfli; `--set 40 --release` as for set 10. Set 41 (--set 41) in /var/tmp/argus-heldout41, a
thirty-first: a PNG for cwebp, C files of messages for xgettext and text with accented letters for
uconv; `--set 41 --release` as for set 10. Set 42 (--set 42) in /var/tmp/argus-heldout42, a
thirty-second: a WebP for dwebp, Markdown for cmark and text for enscript; `--set 42 --release` as
for set 10. Set 43 (--set 43) in /var/tmp/argus-heldout43, a thirty-third: words for aspell, an
XML catalogue for xmlstarlet and broken HTML for tidy; `--set 43 --release` as for set 10. Set 44
(--set 44) in /var/tmp/argus-heldout44, a thirty-fourth: a random graph for dot, sentences for
espeak-ng and words for hunspell; `--set 44 --release` as for set 10. Set 45 (--set 45) in
/var/tmp/argus-heldout45, a thirty-fifth: a PNG for pngquant, an SVG for rsvg-convert and a PDF
for qpdf; `--set 45 --release` as for set 10. Set 46 (--set 46) in /var/tmp/argus-heldout46, a
thirty-sixth: a tree of text files and random bytes for mksquashfs and xorriso to pack into images,
and copies of Debian's LLVM 14 and 15 libraries and clang's for eu-strings; `--set 46 --release`
as for set 10. Set 47 (--set 47) in /var/tmp/argus-heldout47, a thirty-seventh: Markdown for
pandoc, a generated Rust program for rustc and a picture of random pixels for GraphicsMagick;
`--set 47 --release` as for set 10. Set 48 (--set 48) in /var/tmp/argus-heldout48, a
thirty-eighth: a tree of small text files that ostree commits into a repository and borg backs up
into one; `--set 48 --release` as for set 10. Set 49 (--set 49) in /var/tmp/argus-heldout49, a
thirty-ninth: a tree of text files and random bytes with copies among them, which rdfind and
hashdeep read whole, and a SquashFS image of it for unsquashfs; `--set 49 --release` as for set 10.
Set 50 (--set 50) in /var/tmp/argus-heldout50, a fortieth: text with a Ruby script that counts its
words, comma-separated records with a PHP script that sums them by key, a PDF of text made by
enscript and Ghostscript for pdftotext, and text for lrzip; `--set 50 --release` as for set 10.
Set 51 (--set 51) in /var/tmp/argus-heldout51, a forty-first: a generated C program for tcc, a
generated x86-64 assembly file for nasm and a tree of small text files for bsdtar to archive;
`--set 51 --release` as for set 10. Set 52 (--set 52) in /var/tmp/argus-heldout52, a
forty-second: two versions of a file of random bytes and text for xdelta3 to encode the one
against the other, columns of numbers and a script for gnuplot to plot, and a Scheme program for
Guile; `--set 52 --release` as for set 10. Set 53 (--set 53) in /var/tmp/argus-heldout53, a
forty-third: a Forth program for gforth, a PNG for pngcrush and a tar archive of text and random
bytes for pixz; `--set 53 --release` as for set 10. Set 54 (--set 54) in /var/tmp/argus-heldout54,
a forty-fourth: text and random bytes for zpaq and rzip, and a JPEG that cjpeg makes of a picture
of random pixels for jpegoptim; `--set 54 --release` as for set 10. Set 55 (--set 55) in
/var/tmp/argus-heldout55, a forty-fifth: a tree of small text files and random bytes with
duplicates in it for jdupes and genisoimage, and a ustar archive of it for pax to extract; `--set
55 --release` as for set 10. Set 56 (--set 56) in /var/tmp/argus-heldout56, a forty-sixth: text
for compress, a WAV file for opusenc and a PNG of gradients for advpng to recompress; `--set 56
--release` as for set 10. Set 57 (--set 57) in /var/tmp/argus-heldout57, a forty-seventh: an MP3
that lame makes of a WAV for mpg123 to decode, a GIF that gm makes of a PNG of gradients for
gifsicle, and text and random bytes for par2 to protect; `--set 57 --release` as for set 10.
Set 58 (--set 58) in /var/tmp/argus-heldout58, a forty-eighth: text for bzip3, a WAV file for
wavpack and a PPM that gm makes of a PNG of gradients for c44 to encode as DjVu; `--set 58
--release` as for set 10. Set 59 (--set 59) in /var/tmp/argus-heldout59, a forty-ninth: a WAV file
for twolame, a PBM that gm makes of a PNG of gradients by a threshold for potrace to trace, and a
tree of small text files for arj to archive; `--set 59 --release` as for set 10. Set 60 (--set 60)
in /var/tmp/argus-heldout60, a fiftieth: files of random bytes for b3sum to hash, a generated SCSS
style sheet for sassc to compile and a list of keywords for gperf; `--set 60 --release` as for
set 10. Set 61 (--set 61) in /var/tmp/argus-heldout61, a fifty-first: a file of random bytes and a
copy of it changed here and there for rdiff to sign and take the delta of, and a tree of small
text files for ag to search (stockfish reads nothing); `--set 61 --release` as for set 10. Set 62
(--set 62) in /var/tmp/argus-heldout62, a fifty-second: a page of text that pbmtext draws and
pamscale enlarges for tesseract to read, a text for flite to speak, and a site of generated
Markdown pages with its layouts for hugo to build; `--set 62 --release` as for set 10. Set 63
(--set 63) in /var/tmp/argus-heldout63, a fifty-third: a tree of small text files for dar to
archive, and a tree of text files of which a third are copies of others for rmlint to find
(primesieve reads nothing); `--set 63 --release` as for set 10. Set 64 (--set 64) in
/var/tmp/argus-heldout64, a fifty-fourth: a generated shell script of many functions for
shellcheck to analyse, a tree of small text files for hg to commit into a new repository, and a
GP script for gp to run; `--set 64 --release` as for set 10. Set 65 (--set 65) in
/var/tmp/argus-heldout65, a fifty-fifth: a Lisp program for sbcl to run, two versions of a file of
words for bsdiff to compare, and a tree of documented C sources with its configuration for doxygen;
`--set 65 --release` as for set 10. Set 66 (--set 66) in /var/tmp/argus-heldout66, a fifty-sixth: a
Python program for pypy3 to run, a tree of C and Python sources for cloc to count, and a journal of
transactions for ledger to balance; `--set 66 --release` as for set 10. Set 67 (--set 67) in
/var/tmp/argus-heldout67, a fifty-seventh: a Prolog program for swipl to run, a generated assembly
file for yasm to assemble, and a generated grammar for bison; `--set 67 --release` as for set 10.
Set 68 (--set 68) in /var/tmp/argus-heldout68, a fifty-eighth: a lexer specification of many
keywords and patterns for re2c, a tree of manual pages for mandoc to render, and a CSV file for
miller to sort and sum; `--set 68 --release` as for set 10. Set 69 (--set 69) in
/var/tmp/argus-heldout69, a fifty-ninth: a dc program, a deep tree of small files for fdfind to
search, and a tree of text files with CRLF line ends for dos2unix to convert anew each run (from
a pristine copy); `--set 69 --release` as for set 10. Set 70 (--set 70) in
/var/tmp/argus-heldout70, a sixtieth: a file of words and a key file for ccrypt to encrypt with,
an image for avifenc to encode, and lines of text for qrencode to encode one by one; `--set 70
--release` as for set 10.
Deterministic (a fixed seed per
set): every run of the evaluation reads the same bytes. Run as root before
truth_measure.py and matrix.py."""

import argparse
import math
import os
import pwd
import random
import shutil
import struct
import subprocess
import tempfile
import zlib

DIRS = {1: "/var/tmp/argus-heldout", 2: "/var/tmp/argus-heldout2", 3: "/var/tmp/argus-heldout3",
        4: "/var/tmp/argus-heldout4", 5: "/var/tmp/argus-heldout5", 6: "/var/tmp/argus-heldout6",
        7: "/var/tmp/argus-heldout7", 10: "/var/tmp/argus-heldout10",
        11: "/var/tmp/argus-heldout11", 12: "/var/tmp/argus-heldout12",
        13: "/var/tmp/argus-heldout13", 14: "/var/tmp/argus-heldout14",
        15: "/var/tmp/argus-heldout15", 16: "/var/tmp/argus-heldout16",
        17: "/var/tmp/argus-heldout17", 18: "/var/tmp/argus-heldout18",
        19: "/var/tmp/argus-heldout19", 20: "/var/tmp/argus-heldout20",
        21: "/var/tmp/argus-heldout21", 22: "/var/tmp/argus-heldout22",
        23: "/var/tmp/argus-heldout23", 24: "/var/tmp/argus-heldout24",
        25: "/var/tmp/argus-heldout25", 26: "/var/tmp/argus-heldout26",
        27: "/var/tmp/argus-heldout27", 28: "/var/tmp/argus-heldout28",
        29: "/var/tmp/argus-heldout29", 30: "/var/tmp/argus-heldout30",
        31: "/var/tmp/argus-heldout31", 32: "/var/tmp/argus-heldout32",
        33: "/var/tmp/argus-heldout33", 34: "/var/tmp/argus-heldout34",
        35: "/var/tmp/argus-heldout35", 36: "/var/tmp/argus-heldout36",
        37: "/var/tmp/argus-heldout37", 38: "/var/tmp/argus-heldout38",
        39: "/var/tmp/argus-heldout39", 40: "/var/tmp/argus-heldout40",
        41: "/var/tmp/argus-heldout41", 42: "/var/tmp/argus-heldout42",
        43: "/var/tmp/argus-heldout43", 44: "/var/tmp/argus-heldout44",
        45: "/var/tmp/argus-heldout45", 46: "/var/tmp/argus-heldout46",
        47: "/var/tmp/argus-heldout47", 48: "/var/tmp/argus-heldout48",
        49: "/var/tmp/argus-heldout49", 50: "/var/tmp/argus-heldout50",
        51: "/var/tmp/argus-heldout51", 52: "/var/tmp/argus-heldout52",
        53: "/var/tmp/argus-heldout53", 54: "/var/tmp/argus-heldout54",
        55: "/var/tmp/argus-heldout55", 56: "/var/tmp/argus-heldout56",
        57: "/var/tmp/argus-heldout57", 58: "/var/tmp/argus-heldout58",
        59: "/var/tmp/argus-heldout59", 60: "/var/tmp/argus-heldout60",
        61: "/var/tmp/argus-heldout61", 62: "/var/tmp/argus-heldout62",
        63: "/var/tmp/argus-heldout63", 64: "/var/tmp/argus-heldout64",
        65: "/var/tmp/argus-heldout65", 66: "/var/tmp/argus-heldout66",
        67: "/var/tmp/argus-heldout67", 68: "/var/tmp/argus-heldout68",
        69: "/var/tmp/argus-heldout69", 70: "/var/tmp/argus-heldout70"}
JOURNALED = (10, 11, 12, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32,
             33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54,
             55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70)
DIR = DIRS[1]


def vocabulary(rng):
    return ["".join(rng.choice("etaoinshrdlcumwfgypbvkjxqz") for _ in range(rng.randint(2, 9)))
            for _ in range(5000)]


def words(rng, vocab, n):
    return " ".join(rng.choice(vocab) for _ in range(n))


def write(name, text, uid, gid):
    path = os.path.join(DIR, name)
    with open(path, "wb" if isinstance(text, bytes) else "w") as f:
        f.write(text)
    os.chown(path, uid, gid)
    os.chmod(path, 0o644)


def write_random(rng, files, nobody):
    """Each (name, MiB) of files: that many MiB of the generator's random bytes, in turn."""
    for name, mib in files:
        write(name, b"".join(rng.randbytes(1 << 20) for _ in range(mib)), nobody.pw_uid,
              nobody.pw_gid)


def copy_in(path, name):
    """A copy of a file of the system (a library, a program) as name in the set's directory."""
    subprocess.run(["cp", path, os.path.join(DIR, name)], check=True)


def numbered(block, lines):
    """lines lines of the block's lines in turn, each after its line number: repeats of the
    block told apart by their numbers."""
    return "".join("%d %s\n" % (i, block[i % len(block)]) for i in range(lines))


def write_tree(top, dirs, block, nobody, needle_last=False):
    """dirs directories of 100 files of about 8 KB under top; with needle_last, a word found in
    the last file only."""
    for d in range(dirs):
        os.makedirs(os.path.join(DIR, top, "d%02d" % d), exist_ok=True)
        for f in range(100):
            n = d * 100 + f
            text = "".join("%d %s\n" % (n, block[(n * 100 + i) % len(block)]) for i in range(100))
            if needle_last and n == dirs * 100 - 1:
                text += "argusneedle\n"
            write(os.path.join(top, "d%02d" % d, "f%03d.txt" % f), text, nobody.pw_uid, nobody.pw_gid)


def set2(nobody):
    rng = random.Random(20261203)
    vocab = vocabulary(rng)
    block = [words(rng, vocab, 12) for _ in range(32000)]
    # 8 MB of text, copies of a 2.5 MB block told apart by their line numbers
    write("text.dat", numbered(block, 3 * len(block) + 8000), nobody.pw_uid, nobody.pw_gid)
    lines = ["%s %d\n" % (block[i % len(block)], i) for i in range(500000)]
    rng.shuffle(lines)
    write("lines.dat", "".join(lines), nobody.pw_uid, nobody.pw_gid)
    for i in range(8):
        write("blob%d.dat" % i, rng.randbytes(32 << 20), nobody.pw_uid, nobody.pw_gid)


def set3(nobody):
    rng = random.Random(20261204)
    vocab = vocabulary(rng)
    block = [words(rng, vocab, 12) for _ in range(32000)]
    # 24 MB of text: copies of the 2.5 MB block told apart by their line numbers
    write("text.dat", numbered(block, 10 * len(block)), nobody.pw_uid, nobody.pw_gid)
    # 10000 files of about 8 KB in 100 directories; one word found in the last file only
    write_tree("tree", 100, block, nobody, needle_last=True)
    tree = os.path.join(DIR, "tree")
    # 3.2 million lines of two numbers (about 45 MB)
    write("numbers.dat", "".join("%d %d\n" % (i, rng.randrange(1000000)) for i in range(3200000)),
          nobody.pw_uid, nobody.pw_gid)
    # the tree committed and packed: git reads its objects from a mapped pack file
    repo = os.path.join(DIR, "repo")
    env = dict(os.environ, GIT_AUTHOR_NAME="argus", GIT_AUTHOR_EMAIL="argus@localhost",
               GIT_COMMITTER_NAME="argus", GIT_COMMITTER_EMAIL="argus@localhost",
               GIT_AUTHOR_DATE="2026-12-04T00:00:00Z", GIT_COMMITTER_DATE="2026-12-04T00:00:00Z")
    subprocess.run(["rm", "-rf", repo], check=True)
    git = ["git", "-C", repo, "-c", "gc.auto=0"]
    subprocess.run(["git", "init", "-q", repo], check=True, env=env)
    subprocess.run(["cp", "-r", tree, os.path.join(repo, "tree")], check=True)
    subprocess.run(git + ["add", "-A"], check=True, env=env)
    subprocess.run(git + ["commit", "-q", "-m", "tree"], check=True, env=env)
    subprocess.run(git + ["gc", "-q", "--aggressive"], check=True, env=env)
    subprocess.run(["chown", "-R", "%d:%d" % (nobody.pw_uid, nobody.pw_gid), repo], check=True)


def set4(nobody):
    rng = random.Random(20261205)
    vocab = vocabulary(rng)
    block = [words(rng, vocab, 12) for _ in range(32000)]
    # 24 MB of text: copies of the 2.5 MB block told apart by their line numbers
    write("text.dat", numbered(block, 10 * len(block)), nobody.pw_uid, nobody.pw_gid)
    data = rng.randbytes(48 << 20)
    for name in ("blob.dat", "blob2.dat"):
        write(name, data, nobody.pw_uid, nobody.pw_gid)
    # two equal trees of 5000 files of about 8 KB in 50 directories, and where cp writes its copy
    for top in ("tree", "tree2"):
        write_tree(top, 50, block, nobody)
    subprocess.run(["rm", "-rf", os.path.join(DIR, "copy")], check=True)
    os.makedirs(os.path.join(DIR, "copy"))
    subprocess.run(["chown", "-R", "%d:%d" % (nobody.pw_uid, nobody.pw_gid), DIR], check=True)


def set5(nobody):
    rng = random.Random(20261206)
    vocab = vocabulary(rng)
    block = [words(rng, vocab, 12) for _ in range(32000)]
    # 200000 JSON objects, one a line
    write("records.json", "".join('{"id": %d, "n": %d, "w": "%s"}\n' % (i, rng.randrange(1000000),
                                                                        block[i % len(block)])
                                  for i in range(200000)), nobody.pw_uid, nobody.pw_gid)
    write("blob.dat", rng.randbytes(128 << 20), nobody.pw_uid, nobody.pw_gid)
    # 48 MB of text: copies of the 2.5 MB block told apart by their line numbers
    write("text.dat", numbered(block, 20 * len(block)), nobody.pw_uid, nobody.pw_gid)
    for sub in ("parts", "out"):
        subprocess.run(["rm", "-rf", os.path.join(DIR, sub)], check=True)
        os.makedirs(os.path.join(DIR, sub))
    # 5000 files of about 8 KB in 50 directories, stored in one zip archive
    write_tree("tree", 50, block, nobody)
    subprocess.run(["rm", "-f", os.path.join(DIR, "tree.zip")], check=True)
    subprocess.run(["zip", "-q", "-r", "-X", "tree.zip", "tree"], cwd=DIR, check=True)
    subprocess.run(["chown", "-R", "%d:%d" % (nobody.pw_uid, nobody.pw_gid), DIR], check=True)


def set6(nobody):
    rng = random.Random(20261207)
    vocab = vocabulary(rng)
    block = [words(rng, vocab, 12) for _ in range(32000)]
    # a project of 8 C files of 60 functions each, built again by make -B
    proj = os.path.join(DIR, "proj")
    subprocess.run(["rm", "-rf", proj], check=True)
    os.makedirs(proj)
    for f in range(8):
        fns = ["int f%d_%d(int x)\n{\n\tint s = 0;\n\tfor (int i = 0; i < x; i++)\n"
               "\t\ts += (i * %d) ^ (s >> 3);\n\treturn s + %d;\n}\n" % (f, i, rng.randint(3, 97), i)
               for i in range(60)]
        write(os.path.join("proj", "m%d.c" % f), "\n".join(fns), nobody.pw_uid, nobody.pw_gid)
    write(os.path.join("proj", "main.c"), "int main(void)\n{\n\treturn 0;\n}\n",
          nobody.pw_uid, nobody.pw_gid)
    objs = " ".join("m%d.o" % f for f in range(8)) + " main.o"
    write(os.path.join("proj", "Makefile"),
          "CFLAGS = -O1\nprog: %s\n\t$(CC) -o $@ $^\n%%.o: %%.c\n\t$(CC) $(CFLAGS) -c -o $@ $<\n" % objs,
          nobody.pw_uid, nobody.pw_gid)
    # 12 MB of text for lzip, and 48 MB compressed by gzip for gzip -d
    write("text.dat", numbered(block, 5 * len(block)), nobody.pw_uid, nobody.pw_gid)
    write("big.dat", numbered(block, 20 * len(block)), nobody.pw_uid, nobody.pw_gid)
    subprocess.run(["gzip", "-6", "-k", "-f", os.path.join(DIR, "big.dat")], check=True)
    os.unlink(os.path.join(DIR, "big.dat"))
    data = rng.randbytes(96 << 20) * 4
    for name in ("blob.dat", "blob2.dat"):
        write(name, data, nobody.pw_uid, nobody.pw_gid)
    # 120000 empty files in 600 directories
    tree = os.path.join(DIR, "tree")
    subprocess.run(["rm", "-rf", tree], check=True)
    for d in range(600):
        sub_dir = os.path.join(tree, "d%03d" % d)
        os.makedirs(sub_dir)
        for f in range(200):
            open(os.path.join(sub_dir, "f%03d" % f), "w").close()
    subprocess.run(["chown", "-R", "%d:%d" % (nobody.pw_uid, nobody.pw_gid), DIR], check=True)


def set7(nobody):
    rng = random.Random(20261204)
    vocab = vocabulary(rng)
    block = [words(rng, vocab, 12) for _ in range(32000)]
    # two 256 MB files: md5sum reads one, python3 maps the other
    for name in ("blob.dat", "map.dat"):
        write(name, rng.randbytes(64 << 20) * 4, nobody.pw_uid, nobody.pw_gid)
    # 2000 files of about 8 KB in one archive, and the directory tar -x writes them into
    src = os.path.join(DIR, "tree")
    subprocess.run(["rm", "-rf", src, os.path.join(DIR, "out")], check=True)
    write_tree("tree", 20, block, nobody)
    subprocess.run(["tar", "-cf", os.path.join(DIR, "tree.tar"), "-C", src, "."], check=True)
    subprocess.run(["rm", "-rf", src], check=True)
    # 48 MB of lines for shuf and tac
    lines = [block[rng.randrange(len(block))] for _ in range(600000)]
    write("lines.dat", "".join("%s %d\n" % (l, rng.randrange(1 << 30)) for l in lines),
          nobody.pw_uid, nobody.pw_gid)
    os.makedirs(os.path.join(DIR, "out"), exist_ok=True)
    subprocess.run(["chown", "-R", "%d:%d" % (nobody.pw_uid, nobody.pw_gid), DIR], check=True)


def journaled_mount():
    """Mount the set's file system at DIR, made first when there is none: an ext4 file system with
    a journal in DIR.img on a loop device with direct I/O. Returns the loop device."""
    image = DIR + ".img"
    src = subprocess.run(["findmnt", "-n", "-o", "SOURCE", DIR], capture_output=True, text=True)
    if src.returncode == 0 and src.stdout.strip():
        return src.stdout.strip()
    if not os.path.exists(image):
        subprocess.run(["truncate", "-s", "3G", image], check=True)
        subprocess.run(["mkfs.ext4", "-q", "-F", image], check=True)
    dev = subprocess.run(["losetup", "--direct-io=on", "-f", "--show", image], check=True,
                         capture_output=True, text=True).stdout.strip()
    subprocess.run(["mount", dev, DIR], check=True)
    features = subprocess.run(["dumpe2fs", "-h", dev], capture_output=True, text=True).stdout
    if "has_journal" not in features:
        raise SystemExit("prepare: %s has no journal" % dev)
    return dev


def journaled_begin(seed, anew):
    """Mount the set's journaled file system, remove the directories anew of its last preparation,
    and return the loop device and the seeded generator, vocabulary and lines the set writes from."""
    dev = journaled_mount()
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    block = [words(rng, vocab, 12) for _ in range(32000)]
    for d in anew:
        subprocess.run(["rm", "-rf", os.path.join(DIR, d)], check=True)
    return dev, rng, vocab, block


def journaled_end(nobody, dev, out=False):
    """Everything on the file system to nobody, who runs the victims; with out, first an empty
    out/ for the victims' results."""
    if out:
        os.makedirs(os.path.join(DIR, "out"), exist_ok=True)
    subprocess.run(["chown", "-R", "%d:%d" % (nobody.pw_uid, nobody.pw_gid), DIR], check=True)
    os.chmod(DIR, 0o755)
    print("on %s" % dev)


def journaled_release():
    src = subprocess.run(["findmnt", "-n", "-o", "SOURCE", DIR], capture_output=True, text=True)
    dev = src.stdout.strip()
    if not dev:
        print("%s is not mounted" % DIR)
        return
    subprocess.run(["umount", DIR], check=True)
    if dev.startswith("/dev/loop"):
        subprocess.run(["losetup", "-d", dev], check=True)
    print("released %s (%s)" % (DIR, dev))


def set10(nobody):
    dev, rng, vocab, block = journaled_begin(20261210, ("repo", "src", "dst"))
    # 600 files for git add (its .git made anew by each run), 300 for rsync to copy
    write_tree("repo", 6, block, nobody)
    write_tree("src", 3, block, nobody)
    os.makedirs(os.path.join(DIR, "dst"), exist_ok=True)
    sql = ["PRAGMA journal_mode=WAL;", "PRAGMA synchronous=FULL;",
           "DROP TABLE IF EXISTS t;", "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"]
    sql += ["INSERT INTO t(v) VALUES ('%s');" % words(rng, vocab, 20) for _ in range(200)]
    sql += ["SELECT count(*) FROM t;"]
    write("wal.sql", "\n".join(sql) + "\n", nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev)


def set11(nobody):
    dev, rng, vocab, block = journaled_begin(20261211, ("gz", "sysbench"))
    # 600 files of about 8 KB for gzip --synchronous (its .gz files made anew by each run)
    write_tree("gz", 6, block, nobody)
    # one 8 MB file that sysbench's fileio test overwrites in place
    os.makedirs(os.path.join(DIR, "sysbench"))
    subprocess.run(["sysbench", "fileio", "--file-num=1", "--file-total-size=8M", "prepare"],
                   cwd=os.path.join(DIR, "sysbench"), check=True, stdout=subprocess.DEVNULL)
    # 60000 records in mdb_load's text format, committed by it 100 at a time
    dump = ["VERSION=3", "format=print", "type=btree", "mapsize=268435456", "HEADER=END"]
    for i in range(60000):
        dump += [" key%06d" % i, " %s" % words(rng, vocab, 24)]
    dump += ["DATA=END"]
    write("records.mdb.txt", "\n".join(dump) + "\n", nobody.pw_uid, nobody.pw_gid)
    write_random(rng, (("b2.dat", 512),), nobody)
    journaled_end(nobody, dev)


def set12(nobody):
    dev, _, _, block = journaled_begin(20261212, ("tree", "src", "out", "dst"))
    # 48 MB of numbered text for pigz, lbzip2 and xz
    write("text.dat", numbered(block, 18 * len(block)), nobody.pw_uid, nobody.pw_gid)
    # 3000 files of about 8 KB packed for tar -x; 600 more for cp -r
    write_tree("tree", 30, block, nobody)
    subprocess.run(["tar", "-cf", os.path.join(DIR, "tree.tar"), "-C", DIR, "tree"], check=True)
    subprocess.run(["rm", "-rf", os.path.join(DIR, "tree")], check=True)
    write_tree("src", 6, block, nobody)
    journaled_end(nobody, dev)


def set13(nobody):
    rng = random.Random(20261213)
    vocab = vocabulary(rng)
    block = [words(rng, vocab, 12) for _ in range(32000)]
    # 48 MB of numbered text for pbzip2, plzip and zstd
    write("text.dat", numbered(block, 18 * len(block)), nobody.pw_uid, nobody.pw_gid)
    # 500000 shuffled lines for sort
    lines = ["%s %d\n" % (block[i % len(block)], i) for i in range(500000)]
    rng.shuffle(lines)
    write("lines.dat", "".join(lines), nobody.pw_uid, nobody.pw_gid)


def set14(nobody):
    dev, rng, _, block = journaled_begin(20261214, ("tree",))
    # 3000 files of about 8 KB for zip -r (its archive made anew by each run)
    write_tree("tree", 30, block, nobody)
    # 256 MB that shred overwrites in place, 256 MB that sha512sum reads past the page cache
    write_random(rng, (("shred.dat", 256), ("read.dat", 256)), nobody)
    journaled_end(nobody, dev)


def set15(nobody):
    dev, rng, _, block = journaled_begin(20261215, ())
    # 384 MB that openssl encrypts from the page cache
    write_random(rng, (("enc.dat", 384),), nobody)
    # 16 MB of numbered text for perl to count the words of, 192 MB for lz4
    write("words.dat", numbered(block, 6 * len(block)), nobody.pw_uid, nobody.pw_gid)
    write("text.dat", numbered(block, 72 * len(block)), nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev)


def set16(nobody):
    dev, rng, _, block = journaled_begin(20261216, ("gnupg",))
    write_random(rng, (("gpg.dat", 256), ("big.dat", 512), ("hex.dat", 24)), nobody)
    write("text.dat", numbered(block, 35 * len(block)), nobody.pw_uid, nobody.pw_gid)
    write("lines.dat", numbered(block, 58 * len(block)), nobody.pw_uid, nobody.pw_gid)
    os.makedirs(os.path.join(DIR, "gnupg"), mode=0o700)
    journaled_end(nobody, dev)


def set17(nobody):
    dev, rng, _, block = journaled_begin(20261217, ())
    write_random(rng, (("big.dat", 640), ("b64.dat", 128), ("bin.dat", 96)), nobody)
    write("text.dat", numbered(block, 9 * len(block)), nobody.pw_uid, nobody.pw_gid)
    write("lzo.dat", numbered(block, 70 * len(block)), nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev)


def set18(nobody):
    dev, rng, _, block = journaled_begin(20261218, ("tree",))
    write_random(rng, (("big.dat", 640), ("od.dat", 32)), nobody)
    write("text.dat", numbered(block, 35 * len(block)), nobody.pw_uid, nobody.pw_gid)
    write("utf.dat", numbered(block, 18 * len(block)), nobody.pw_uid, nobody.pw_gid)
    write_tree("tree", 60, block, nobody)
    journaled_end(nobody, dev)


def set19(nobody):
    dev, rng, _, block = journaled_begin(20261219, ())
    write_random(rng, (("big.dat", 512),), nobody)
    write("text.dat", numbered(block, 24 * len(block)), nobody.pw_uid, nobody.pw_gid)
    write("a.dat", numbered(block, 12 * len(block)), nobody.pw_uid, nobody.pw_gid)
    write("b.dat", numbered(block, 12 * len(block)), nobody.pw_uid, nobody.pw_gid)
    lines = sorted(block[rng.randrange(len(block))] for _ in range(800000))
    write("sorted.dat", "".join(l + "\n" for l in lines), nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev)


def set20(nobody):
    dev, rng, _, block = journaled_begin(20261220, ())
    write_random(rng, (("big.dat", 512), ("r48.dat", 48)), nobody)
    write("text.dat", numbered(block, 24 * len(block)), nobody.pw_uid, nobody.pw_gid)
    write("tabs.dat", numbered(block, 12 * len(block)).replace(" ", "\t"), nobody.pw_uid,
          nobody.pw_gid)
    for name in ("a.dat", "b.dat"):
        lines = sorted("%s %d" % (block[rng.randrange(len(block))], rng.randrange(1000))
                       for _ in range(280000))
        write(name, "".join(l + "\n" for l in lines), nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev)


def set21(nobody):
    dev, rng, vocab, block = journaled_begin(20261221, ("parts",))
    write_random(rng, (("big.dat", 384),), nobody)
    write("text.dat", numbered(block, 18 * len(block)), nobody.pw_uid, nobody.pw_gid)
    # unique keys, zero-padded so that C collation sorts them as numbers; about half shared
    for name in ("a.dat", "b.dat"):
        keys = sorted(rng.sample(range(500000), 250000))
        write(name, "".join("k%07d %s\n" % (k, block[k % len(block)]) for k in keys),
              nobody.pw_uid, nobody.pw_gid)
    # 260000 records of about 600 bytes, loaded by mdb_load into one file
    dump = ["VERSION=3", "format=print", "type=btree", "mapsize=536870912", "HEADER=END"]
    for i in range(260000):
        dump += [" key%07d" % i, " %s" % words(rng, vocab, 96)]
    dump += ["DATA=END"]
    subprocess.run(["rm", "-f", os.path.join(DIR, "lmdb.mdb"), os.path.join(DIR, "lmdb.mdb-lock")],
                   check=True)
    subprocess.run(["mdb_load", "-n", "-f", "/dev/stdin", os.path.join(DIR, "lmdb.mdb")],
                   input=("\n".join(dump) + "\n").encode(), check=True)
    journaled_end(nobody, dev)


def set22(nobody):
    dev, rng, _, block = journaled_begin(20261222, ())
    write("text.dat", numbered(block, 18 * len(block)), nobody.pw_uid, nobody.pw_gid)
    write("words.dat", numbered(block, 40000), nobody.pw_uid, nobody.pw_gid)
    write("text3.dat", numbered(block, 54 * len(block)), nobody.pw_uid, nobody.pw_gid)
    write_random(rng, (("r8.dat", 8),), nobody)
    write("build.tcl", "set d [dict create]\n"
          "for {set i 0} {$i < 300000} {incr i} { dict set d key$i [string repeat x 64] }\n"
          "puts [dict size $d]\n", nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev)


def set23(nobody):
    dev, rng, vocab, block = journaled_begin(20261223, ())
    # odd products of two random numbers of up to 31 bits: factor's work is the search
    nums = ["%d" % (rng.getrandbits(31) * rng.getrandbits(31) | 1) for _ in range(NUMS23)]
    write("nums.dat", "\n".join(nums) + "\n", nobody.pw_uid, nobody.pw_gid)
    write("text.dat", numbered(block, 36 * len(block)), nobody.pw_uid, nobody.pw_gid)
    write("table.dat", "".join("%s\n" % words(rng, vocab, 6) for _ in range(TABLE23)),
          nobody.pw_uid, nobody.pw_gid)
    # a chain of names with shortcuts: a graph with one order, which tsort finds
    names = ["n%06d" % i for i in range(EDGES23)]
    rng.shuffle(names)
    edges = ["%s %s" % (names[i], names[i + 1]) for i in range(len(names) - 1)]
    edges += ["%s %s" % (names[i], names[min(len(names) - 1, i + rng.randint(2, 50))])
              for i in range(0, len(names) - 1, 3)]
    write("edges.dat", "\n".join(edges) + "\n", nobody.pw_uid, nobody.pw_gid)
    # the needle on the last line alone: grep reads the whole file, and finds it
    write("big.dat", numbered(block, 144 * len(block)) + "argusneedle\n", nobody.pw_uid,
          nobody.pw_gid)
    journaled_end(nobody, dev)


NUMS23 = 16000
TABLE23 = 120000
EDGES23 = 200000


def set24(nobody):
    dev, rng, vocab, block = journaled_begin(20261224, ("tree",))
    # one macro defined, called four times a line: m4's work is the expansion
    calls = " ".join("W(%s,%s)" for _ in range(4))
    write("calls.m4", "define(`W', `[$2:$1]')dnl\n" + "".join(
        calls % tuple(rng.choice(vocab) for _ in range(8)) + "\n" for _ in range(M4_LINES)),
        nobody.pw_uid, nobody.pw_gid)
    copy_in("/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1", "llvm.so")
    # three versions of one text, each with its own lines changed
    base = numbered(block, 4 * len(block)).splitlines(True)
    for name, seed in (("v0.txt", None), ("v1.txt", 1), ("v2.txt", 2)):
        lines = list(base)
        if seed is not None:
            r = random.Random(seed)
            for i in r.sample(range(len(lines)), 400):
                lines[i] = "%s\n" % words(r, vocab, 12)
        write(name, "".join(lines), nobody.pw_uid, nobody.pw_gid)
    write_tree("tree", 20, block, nobody)
    rows = "".join('  <r id="%d"><w>%s</w><n>%d</n></r>\n' % (i, block[i % len(block)], i * 7)
                   for i in range(XML_ROWS))
    write("big.xml", '<?xml version="1.0"?>\n<rows>\n%s</rows>\n' % rows, nobody.pw_uid,
          nobody.pw_gid)
    journaled_end(nobody, dev)


M4_LINES = 200000
XML_ROWS = 160000


def set25(nobody):
    dev, rng, vocab, block = journaled_begin(20261225, ())
    # rows in no order, and a stylesheet that writes them sorted by their key
    rows = "".join('  <item key="%s" n="%d">%s</item>\n' % (rng.choice(vocab), i, block[i % len(block)])
                   for i in range(XSLT_ROWS))
    write("items.xml", '<?xml version="1.0"?>\n<items>\n%s</items>\n' % rows, nobody.pw_uid,
          nobody.pw_gid)
    write("sort.xsl", SORT_XSL, nobody.pw_uid, nobody.pw_gid)
    write("audio.wav", wav(rng, WAV_S), nobody.pw_uid, nobody.pw_gid)
    copy_in("/usr/lib/x86_64-linux-gnu/libcrypto.so.3", "crypto.so")
    # a text, and a diff that changes one line in PATCH_EVERY of it
    lines = numbered(block, PATCH_LINES).splitlines(True)
    write("orig.txt", "".join(lines), nobody.pw_uid, nobody.pw_gid)
    new = [("%s\n" % words(rng, vocab, 12)) if i % PATCH_EVERY == 0 else l
           for i, l in enumerate(lines)]
    write("new.txt", "".join(new), nobody.pw_uid, nobody.pw_gid)
    # labels in place of the files' names and times: the same bytes at every preparation
    diff = subprocess.run(["diff", "-u", "--label", "orig.txt", "--label", "new.txt", "orig.txt",
                           "new.txt"], cwd=DIR, capture_output=True, text=True)
    if diff.returncode != 1:
        raise SystemExit("prepare: diff of set 25's text: %s" % diff.stderr)
    write("text.diff", diff.stdout, nobody.pw_uid, nobody.pw_gid)
    os.unlink(os.path.join(DIR, "new.txt"))
    # a manual page of sections of tagged paragraphs
    page = ['.TH ARGUS 1 "2026" "argus" "held-out set 25"']
    for sec in range(MAN_SECTIONS):
        page.append(".SH SECTION%d" % sec)
        for i in range(20):
            page += [".TP", "\\fB%s\\fR %s" % (rng.choice(vocab), rng.choice(vocab)),
                     block[(sec * 20 + i) % len(block)], block[(sec * 20 + i + 1) % len(block)]]
    write("page.1", "\n".join(page) + "\n", nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev)


def wav(rng, seconds):
    """A WAV file of 16-bit stereo samples at 44.1 kHz: two drifting tones and noise, which
    flac predicts in part."""
    n = 44100 * seconds
    data = bytearray()
    f1, f2 = 220.0, 331.0
    for i in range(0, n, 441):
        f1 += rng.uniform(-2, 2)
        f2 += rng.uniform(-2, 2)
        for j in range(i, min(n, i + 441)):
            a = 9000 * math.sin(2 * math.pi * f1 * j / 44100) + rng.randint(-600, 600)
            b = 7000 * math.sin(2 * math.pi * f2 * j / 44100) + rng.randint(-600, 600)
            data += struct.pack("<hh", int(a), int(b))
    head = struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + len(data), b"WAVE", b"fmt ", 16, 1, 2,
                       44100, 44100 * 4, 4, 16, b"data", len(data))
    return head + bytes(data)


SORT_XSL = """<?xml version="1.0"?>
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
<xsl:output method="text"/>
<xsl:template match="/items">
<xsl:for-each select="item">
<xsl:sort select="@key"/>
<xsl:sort select="@n" data-type="number" order="descending"/>
<xsl:value-of select="@key"/> <xsl:value-of select="@n"/>: <xsl:value-of select="."/>
<xsl:text>&#10;</xsl:text>
</xsl:for-each>
</xsl:template>
</xsl:stylesheet>
"""
XSLT_ROWS = 60000
WAV_S = 120
PATCH_LINES = 400000
PATCH_EVERY = 20
MAN_SECTIONS = 400


def set26(nobody):
    dev, rng, vocab, block = journaled_begin(20261226, ("src",))
    # C files of small functions, structures and macros, for ctags to parse
    for d in range(C_DIRS26):
        os.makedirs(os.path.join(DIR, "src", "d%02d" % d), exist_ok=True)
        for f in range(100):
            text = []
            for k in range(12):
                fn = "%s_%02d_%03d_%d" % (rng.choice(vocab), d, f, k)
                text += ["struct s_%s { int a; long b[%d]; char *name; };\n" % (fn, rng.randint(1, 9)),
                         "static int %s(int x, struct s_%s *p)\n{\n\tint i, t = 0;\n"
                         "\tfor (i = 0; i < x; i++)\n\t\tt += p->b[i %% %d] * %d;\n"
                         "\treturn t + helper_%d(x);\n}\n" % (fn, fn, rng.randint(1, 9),
                                                              rng.randint(1, 99), rng.randint(0, 999)),
                         "#define M_%s(x) ((x) * %d + %d)\n" % (fn.upper(), rng.randint(1, 9),
                                                              rng.randint(1, 9))]
            write(os.path.join("src", "d%02d" % d, "f%03d.c" % f), "".join(text), nobody.pw_uid,
                  nobody.pw_gid)
    copy_in("/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1", "llvm.so")
    write_random(rng, (("big.dat", 320),), nobody)
    write("tables.lua", TABLES_LUA, nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev)


C_DIRS26 = 30
TABLES_LUA = """-- 1.2 million small tables, then a pass over them: memory taken in small pieces
local t = {}
for i = 1, 1200000 do t[i] = {i, i * 2, i % 7} end
local n = 0
for i = 1, #t do n = n + t[i][2] - t[i][3] end
print(n)
"""


def set27(nobody):
    dev, rng, vocab, block = journaled_begin(20261227, ("tree",))
    write_tree("tree", RG_DIRS27, block, nobody)
    write("words.txt", numbered(block, GAWK_LINES27), nobody.pw_uid, nobody.pw_gid)
    write("text.txt", numbered(block, BROTLI_LINES27), nobody.pw_uid, nobody.pw_gid)
    write("audio.wav", wav(rng, SOX_S27), nobody.pw_uid, nobody.pw_gid)
    # functions of loops and branches that clang -O2 unrolls, vectorizes and inlines
    write("gen.c", loops_c(rng, CLANG_FNS27), nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev)


def random_ppm(rng, w, h, nobody):
    """picture.ppm: a binary PPM of w x h random pixels, the worst case of an image codec's
    transform and entropy coding."""
    write("picture.ppm", b"P6\n%d %d\n255\n" % (w, h) + rng.randbytes(w * h * 3), nobody.pw_uid,
          nobody.pw_gid)


def loops_c(rng, n):
    """A C file of n functions of loops and branches, which a compiler -O2 unrolls, vectorizes and
    inlines, and an entry that calls them all."""
    fns = []
    for i in range(n):
        a, b, c = rng.randint(3, 97), rng.randint(1, 31), rng.randint(2, 9)
        fns.append("static long g%d(const long *v, int n)\n{\n\tlong s = %d;\n"
                   "\tfor (int i = 0; i < n; i++)\n"
                   "\t\ts += (v[i] * %d) ^ (s >> %d) ^ (i %% %d ? v[n - 1 - i] : %d);\n"
                   "\treturn s;\n}\n" % (i, i, a, b % 13 + 1, c, a * b))
    fns.append("long entry(const long *v, int n)\n{\n\tlong s = 0;\n%s\treturn s;\n}\n" %
               "".join("\ts += g%d(v, n + %d);\n" % (i, i % 7) for i in range(n)))
    return "\n".join(fns)


RG_DIRS27 = 80
GAWK_LINES27 = 700000
BROTLI_LINES27 = 520000
SOX_S27 = 180
CLANG_FNS27 = 180


def set28(nobody):
    dev, rng, vocab, block = journaled_begin(20261228, ("src",))
    write("audio.wav", wav(rng, OGG_S28), nobody.pw_uid, nobody.pw_gid)
    random_ppm(rng, PPM_W28, PPM_H28, nobody)
    write("format.c", loops_c(rng, FORMAT_FNS28), nobody.pw_uid, nobody.pw_gid)
    for d in range(CHECK_DIRS28):
        os.makedirs(os.path.join(DIR, "src", "d%02d" % d), exist_ok=True)
        for f in range(CHECK_FILES28):
            write(os.path.join("src", "d%02d" % d, "f%03d.c" % f), loops_c(rng, 12), nobody.pw_uid,
                  nobody.pw_gid)
    # rows of an amount, a key from the vocabulary and a measure, in no order
    rows = "".join("%d\t%s\t%d.%02d\n" % (rng.randint(1, 9999), rng.choice(vocab),
                                            rng.randint(0, 999), rng.randint(0, 99))
                   for _ in range(DATAMASH_ROWS28))
    write("table.tsv", rows, nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev)


OGG_S28 = 40
PPM_W28, PPM_H28 = 4000, 3000
FORMAT_FNS28 = 3000
CHECK_DIRS28, CHECK_FILES28 = 4, 50
DATAMASH_ROWS28 = 1500000


def set29(nobody):
    dev, rng, vocab, block = journaled_begin(20261229, ("tree", "classes"))
    write_tree("tree", FILE_DIRS29, block, nobody)
    os.makedirs(os.path.join(DIR, "classes"), exist_ok=True)
    os.chown(os.path.join(DIR, "classes"), nobody.pw_uid, nobody.pw_gid)
    # class templates instantiated over many types: work for g++'s front end and optimizer
    cxx = ["#include <vector>\n#include <map>\n#include <string>\n#include <algorithm>\n",
           "template <int N> struct K { std::map<std::string, std::vector<long>> m;\n"
           "  long run(const std::string &k) { auto &v = m[k]; v.push_back(N);\n"
           "    std::sort(v.begin(), v.end()); long s = 0; for (long x : v) s += x * N; return s; } };\n"]
    cxx += ["long f%d(const std::string &k) { K<%d> a; return a.run(k) + %d; }\n"
            % (i, rng.randint(1, 100000), i) for i in range(GXX_FNS29)]
    write("gen.cc", "".join(cxx), nobody.pw_uid, nobody.pw_gid)
    java = ["public class Gen {\n"]
    java += ["  static long m%d(long[] v) { long s = %d; for (int i = 0; i < v.length; i++) "
             "s += (v[i] * %d) ^ (s >>> %d); return s; }\n"
             % (i, i, rng.randint(3, 97), rng.randint(1, 13)) for i in range(JAVA_FNS29)]
    java.append("}\n")
    write("Gen.java", "".join(java), nobody.pw_uid, nobody.pw_gid)
    f90 = ["module gen\ncontains\n"]
    f90 += ["  function g%d(v, n) result(s)\n    integer, intent(in) :: n\n"
            "    real(8), intent(in) :: v(n)\n    real(8) :: s\n    integer :: i\n    s = %d.0d0\n"
            "    do i = 1, n\n      s = s + v(i) * %d.0d0 - mod(i, %d)\n    end do\n"
            "  end function\n" % (i, i, rng.randint(2, 97), rng.randint(2, 9)) for i in range(F90_FNS29)]
    f90.append("end module\n")
    write("gen.f90", "".join(f90), nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev)


FILE_DIRS29 = 5
GXX_FNS29 = 60
JAVA_FNS29 = 1200
F90_FNS29 = 250


def set30(nobody):
    dev, rng, vocab, block = journaled_begin(20261230, ("out",))
    os.makedirs(os.path.join(DIR, "out"), exist_ok=True)
    # functions of dependent arithmetic and branches: work for the assembler's parser and encoder
    asm = ["\t.text\n"]
    for i in range(AS_FNS30):
        body = "".join("\tleaq %d(%%rdi,%%rsi,%d), %%rax\n\timulq $%d, %%rax\n\txorq %%rax, %%rdx\n"
                       "\tcmpq $%d, %%rdx\n\tjne .L%d_%d\n.L%d_%d:\n"
                       % (rng.randint(1, 4095), rng.choice((1, 2, 4, 8)), rng.randint(3, 9999),
                          rng.randint(1, 65535), i, j, i, j) for j in range(AS_STEPS30))
        asm.append("\t.globl f%d\n\t.type f%d, @function\nf%d:\n%s\tmovq %%rdx, %%rax\n\tret\n"
                   % (i, i, i, body))
    write("gen.s", "".join(asm), nobody.pw_uid, nobody.pw_gid)
    # one page of random stroked and filled Bezier curves: work for the rasterizer
    ps = ["%!PS\n0.4 setlinewidth\n"]
    for _ in range(GS_CURVES30):
        xy = ["%d" % rng.randint(0, 600) for _ in range(8)]
        ps.append("%.2f %.2f %.2f setrgbcolor newpath %s moveto %s curveto closepath %s\n"
                  % (rng.random(), rng.random(), rng.random(), " ".join(xy[:2]), " ".join(xy[2:]),
                     rng.choice(("fill", "stroke"))))
    ps.append("showpage\n")
    write("page.ps", "".join(ps), nobody.pw_uid, nobody.pw_gid)
    random_ppm(rng, PPM_W30, PPM_H30, nobody)
    write("text.txt", numbered(block, ED_LINES30), nobody.pw_uid, nobody.pw_gid)
    subs = rng.sample(vocab, ED_SUBS30)
    write("edit.ed", "".join("g/ %s /s// %s /g\n" % (a, a.upper()) for a in subs) + "w out/text.txt\nq\n",
          nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev)


AS_FNS30, AS_STEPS30 = 12000, 15
GS_CURVES30 = 25000
PPM_W30, PPM_H30 = 2400, 1800
ED_LINES30 = 130000
ED_SUBS30 = 6


def set31(nobody):
    dev, rng, vocab, block = journaled_begin(20261231, ("tree", "py", "fs"))
    # modules of functions, loops and comprehensions for Python's byte compiler
    os.makedirs(os.path.join(DIR, "py"), exist_ok=True)
    for m in range(PY_MODULES31):
        fns = ["def f%d(v):\n    s = %d\n    for i, x in enumerate(v):\n"
               "        s ^= (x * %d) >> (i %% %d)\n    return [s + k for k in v if k %% %d]\n"
               % (i, i, rng.randint(3, 97), rng.randint(2, 9), rng.randint(2, 7))
               for i in range(PY_FNS31)]
        write(os.path.join("py", "m%03d.py" % m), "\n".join(fns), nobody.pw_uid, nobody.pw_gid)
    random_ppm(rng, PPM_W31, PPM_H31, nobody)
    # a tree of small files that mke2fs copies into a new image of the file system each run
    write_tree("tree", MKFS_DIRS31, block, nobody)
    os.makedirs(os.path.join(DIR, "fs"), exist_ok=True)
    write("text.txt", numbered(block, GZIP_LINES31), nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev)


PY_MODULES31, PY_FNS31 = 350, 60
PPM_W31, PPM_H31 = 5000, 3300
MKFS_DIRS31 = 80
GZIP_LINES31 = 80000


def set32(nobody):
    dev, rng, vocab, block = journaled_begin(20261232, ("tree", "out", "classes"))
    # a JPEG of random pixels (cjpeg's worst case, so djpeg's too), made here by cjpeg
    random_ppm(rng, JPEG_W32, JPEG_H32, nobody)
    with open(os.path.join(DIR, "picture.jpg"), "wb") as f:
        subprocess.run(["cjpeg", "-quality", "90", os.path.join(DIR, "picture.ppm")], stdout=f,
                       check=True)
    os.remove(os.path.join(DIR, "picture.ppm"))
    write_tree("tree", AR_DIRS32, block, nobody)
    os.makedirs(os.path.join(DIR, "out"), exist_ok=True)
    # a class whose main folds a table of longs many times: work for the JVM's interpreter and JIT
    java = ("public class Fold {\n  public static void main(String[] a) {\n"
            "    long[] v = new long[%d];\n    for (int i = 0; i < v.length; i++) v[i] = i * %dL;\n"
            "    long s = 0;\n    for (int r = 0; r < %d; r++)\n"
            "      for (int i = 0; i < v.length; i++) s = (s * 31) ^ (v[i] >>> (r & 7));\n"
            "    System.out.println(s);\n  }\n}\n" % (JAVA_N32, rng.randint(3, 97), JAVA_ROUNDS32))
    os.makedirs(os.path.join(DIR, "classes"), exist_ok=True)
    write("Fold.java", java, nobody.pw_uid, nobody.pw_gid)
    subprocess.run(["javac", "-d", os.path.join(DIR, "classes"), os.path.join(DIR, "Fold.java")],
                   check=True)
    journaled_end(nobody, dev)


JPEG_W32, JPEG_H32 = 9000, 6000
AR_DIRS32 = 15
JAVA_N32, JAVA_ROUNDS32 = 1000000, 600


def set33(nobody):
    dev, rng, vocab, block = journaled_begin(20261233, ("out", "tmp"))
    for d in ("out", "tmp"):
        os.makedirs(os.path.join(DIR, d), exist_ok=True)
    # paragraphs of arithmetic on working-storage fields: work for cobc's translator and gcc
    fields = "".join("       01 W%d PIC S9(9) COMP VALUE %d.\n" % (i, rng.randint(1, 999))
                     for i in range(COBOL_FIELDS33))
    paras = "".join("       P%d.\n           COMPUTE W%d = W%d * %d + W%d - %d.\n"
                    "           IF W%d > %d MOVE %d TO W%d END-IF.\n"
                    % (i, i % COBOL_FIELDS33, (i * 7) % COBOL_FIELDS33, rng.randint(2, 9),
                       (i * 13) % COBOL_FIELDS33, rng.randint(1, 99), i % COBOL_FIELDS33,
                       rng.randint(1000, 99999), rng.randint(1, 99), i % COBOL_FIELDS33)
                    for i in range(COBOL_PARAS33))
    cob = ("       IDENTIFICATION DIVISION.\n       PROGRAM-ID. GEN.\n       DATA DIVISION.\n"
           "       WORKING-STORAGE SECTION.\n%s       PROCEDURE DIVISION.\n       MAIN-PARA.\n"
           "           PERFORM P0 THRU P%d.\n           DISPLAY W0.\n           STOP RUN.\n%s"
           % (fields, COBOL_PARAS33 - 1, paras))
    write("gen.cob", cob, nobody.pw_uid, nobody.pw_gid)
    # a message catalog: each message a line of the text, its translation the line reversed
    po = ['msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n']
    for i in range(PO_MESSAGES33):
        line = "%d %s" % (i, block[i % len(block)])
        po.append('msgid "%s"\nmsgstr "%s"\n\n' % (line, " ".join(reversed(line.split()))))
    write("messages.po", "".join(po), nobody.pw_uid, nobody.pw_gid)
    # a CMake script of string and list work in a loop: work for cmake's interpreter
    words = rng.sample(vocab, 40)
    write("work.cmake",
          "cmake_policy(SET CMP0007 NEW)\nset(acc \"\")\nset(n 0)\nforeach(i RANGE %d)\n"
          "  foreach(w %s)\n    string(TOUPPER \"${w}${i}\" u)\n"
          "    string(REPLACE \"A\" \"a\" u \"${u}\")\n    math(EXPR n \"(${n} * 31 + ${i}) %% 1000003\")\n"
          "  endforeach()\n  string(APPEND acc \"${n};\")\nendforeach()\nlist(LENGTH acc k)\n"
          "message(STATUS \"${n} ${k}\")\n" % (CMAKE_ROUNDS33 - 1, " ".join(words)),
          nobody.pw_uid, nobody.pw_gid)
    write("music.wav", wav(rng, OGG_S33), nobody.pw_uid, nobody.pw_gid)
    subprocess.run(["oggenc", "-Q", "-q", "6", "-o", os.path.join(DIR, "music.ogg"),
                    os.path.join(DIR, "music.wav")], check=True)
    os.remove(os.path.join(DIR, "music.wav"))
    journaled_end(nobody, dev)


COBOL_FIELDS33, COBOL_PARAS33 = 200, 600
PO_MESSAGES33 = 60000
CMAKE_ROUNDS33 = 1200
OGG_S33 = 240


def set34(nobody):
    dev, rng, vocab, block = journaled_begin(20261234, ("pkg", "out"))
    write_random(rng, (("big.dat", SHA_MIB34),), nobody)
    # a package's tree: its control file and directories of text files for dpkg-deb to pack
    os.makedirs(os.path.join(DIR, "pkg", "DEBIAN"), exist_ok=True)
    write(os.path.join("pkg", "DEBIAN", "control"),
          "Package: argus-heldout34\nVersion: 1.0\nArchitecture: all\n"
          "Maintainer: nobody <nobody@localhost>\nDescription: a tree of text files\n",
          nobody.pw_uid, nobody.pw_gid)
    for d in range(PKG_DIRS34):
        top = os.path.join("pkg", "usr", "share", "doc-%02d" % d)
        os.makedirs(os.path.join(DIR, top), exist_ok=True)
        for f in range(100):
            n = d * 100 + f
            write(os.path.join(top, "f%03d.txt" % f),
                  "".join("%d %s\n" % (n, block[(n * 977 + i) % len(block)]) for i in range(400)),
                  nobody.pw_uid, nobody.pw_gid)
    # an image of a file system holding many tiny files in their inodes, for e2fsck to check;
    # the files are written to memory first and copied in by mke2fs
    os.makedirs(os.path.join(DIR, "out"), exist_ok=True)
    image = os.path.join(DIR, "fs.img")
    if os.path.exists(image):
        os.remove(image)
    tree = tempfile.mkdtemp(prefix="argus-heldout34-", dir="/dev/shm")
    try:
        for d in range(FSCK_DIRS34):
            os.makedirs(os.path.join(tree, "d%03d" % d))
            for f in range(FSCK_FILES34):
                with open(os.path.join(tree, "d%03d" % d, "f%03d" % f), "w") as out:
                    out.write(block[(d * FSCK_FILES34 + f) % len(block)] + "\n")
        subprocess.run(["mke2fs", "-q", "-t", "ext4", "-O", "inline_data", "-I", "256", "-N",
                        "%d" % (FSCK_DIRS34 * FSCK_FILES34 + FSCK_DIRS34 + 64), "-d", tree, image,
                        "%dM" % FSCK_IMAGE_MIB34], check=True)
    finally:
        shutil.rmtree(tree)
    journaled_end(nobody, dev)


SHA_MIB34 = 256
PKG_DIRS34 = 12
FSCK_DIRS34, FSCK_FILES34, FSCK_IMAGE_MIB34 = 750, 400, 512


def set35(nobody):
    dev, rng, vocab, block = journaled_begin(20261235, ("ada",))
    # functions of loops and branches for clang-tidy's parser and readability checks
    fns = ["int f%d(int x)\n{\n\tint s = %d;\n\tfor (int i = 0; i < x; i++)\n"
           "\t\tif (i %% %d)\n\t\t\ts += (i * %d) ^ (s >> 3);\n\treturn s;\n}\n"
           % (i, rng.randint(0, 99), rng.randint(2, 9), rng.randint(3, 97)) for i in range(TIDY_FNS35)]
    write("gen.c", "\n".join(fns), nobody.pw_uid, nobody.pw_gid)
    # an Ada procedure of many small computations, compiled, bound and linked by gnatmake
    os.makedirs(os.path.join(DIR, "ada"), exist_ok=True)
    body = "".join("      S := (S * %d + %d) mod 1000003;\n      if S > %d then S := S - %d; end if;\n"
                   % (rng.randint(3, 97), i, rng.randint(1000, 999999), rng.randint(1, 999))
                   for i in range(ADA_STEPS35))
    write(os.path.join("ada", "main.adb"),
          "with Ada.Text_IO;\nprocedure Main is\n   S : Integer := %d;\nbegin\n%s"
          "   Ada.Text_IO.Put_Line (Integer'Image (S));\nend Main;\n" % (rng.randint(1, 99), body),
          nobody.pw_uid, nobody.pw_gid)
    # a loop of arithmetic in gdb's own command language, run with no program
    write("loop.gdb",
          "set $s = %d\nset $i = 0\nwhile $i < %d\n  set $s = ($s * 31 + $i) %% 1000003\n"
          "  set $i = $i + 1\nend\nprint $s\n" % (rng.randint(1, 99), GDB_ROUNDS35),
          nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev)


TIDY_FNS35 = 800
ADA_STEPS35 = 700
GDB_ROUNDS35 = 25000


def set36(nobody):
    dev, rng, vocab, block = journaled_begin(20261236, ("out",))
    # Debian's LLVM 14 library, whose symbol tables llvm-readobj prints and which llvm-objcopy
    # copies; each maps its input
    copy_in("/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1", "lib.so")
    os.makedirs(os.path.join(DIR, "out"), exist_ok=True)
    # random bytes with lines of text between them, every byte of which llvm-strings reads
    # through its mapping of the file
    with open(os.path.join(DIR, "mixed.dat"), "wb") as out:
        for i in range(STRINGS_MIB36):
            out.write(rng.randbytes(1 << 19))
            out.write(numbered(block[(i * 97) % 1000:], 6500).encode()[:1 << 19])
    journaled_end(nobody, dev)


STRINGS_MIB36 = 256


def set37(nobody):
    dev, rng, vocab, block = journaled_begin(20261237, ("pg",))
    # a catalog of messages and an older translation of it whose messages differ in a word or
    # two, so that msgmerge matches most of them fuzzily
    pot = ['msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n']
    po = list(pot)
    for i in range(PO_MESSAGES37):
        words_i = words(rng, vocab, 8).split()
        pot.append('msgid "%s"\nmsgstr ""\n' % " ".join(words_i))
        words_i[rng.randrange(len(words_i))] = vocab[rng.randrange(len(vocab))]
        po.append('msgid "%s"\nmsgstr "%s"\n' % (" ".join(words_i), words(rng, vocab, 8)))
    write("messages.pot", "\n".join(pot), nobody.pw_uid, nobody.pw_gid)
    write("old.po", "\n".join(po), nobody.pw_uid, nobody.pw_gid)
    # the mangled C++ names LLVM 14's library exports, in turn, for c++filt to demangle
    nm = subprocess.run(["nm", "-D", "--defined-only", "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1"],
                        check=True, capture_output=True, text=True).stdout
    names = [f[2] for f in (line.split() for line in nm.splitlines()) if len(f) == 3 and f[2].startswith("_Z")]
    write("mangled.txt", "".join("%s\n" % n for _ in range(CXXFILT_ROUNDS37) for n in names),
          nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev)


PO_MESSAGES37 = 6000
CXXFILT_ROUNDS37 = 8


def set38(nobody):
    dev, rng, vocab, block = journaled_begin(20261238, ("tree",))
    # byte counts, one a line, for numfmt to print in IEC units
    write("sizes.txt", "".join("%d\n" % rng.randrange(1, 1 << 40) for _ in range(NUMFMT_LINES38)),
          nobody.pw_uid, nobody.pw_gid)
    # a JPEG of random pixels for jpegtran to rotate (the PPM it was made from removed)
    random_ppm(rng, JPEG_SIDE38, JPEG_SIDE38, nobody)
    with open(os.path.join(DIR, "picture.jpg"), "wb") as out:
        subprocess.run(["cjpeg", "-quality", "90", os.path.join(DIR, "picture.ppm")], stdout=out,
                       check=True)
    os.remove(os.path.join(DIR, "picture.ppm"))
    # a tree of small files that ls -lR lists under strace
    for d in range(STRACE_DIRS38):
        os.makedirs(os.path.join(DIR, "tree", "d%03d" % d))
        for f in range(STRACE_FILES38):
            with open(os.path.join(DIR, "tree", "d%03d" % d, "f%03d" % f), "w") as out:
                out.write(block[(d * STRACE_FILES38 + f) % len(block)] + "\n")
    journaled_end(nobody, dev)


NUMFMT_LINES38 = 3000000
JPEG_SIDE38 = 5000
STRACE_DIRS38, STRACE_FILES38 = 100, 100


def set39(nobody):
    dev, rng, vocab, block = journaled_begin(20261239, ("db",))
    # text for vim to edit and write back; the directory mariadb-install-db fills
    write("text.txt", numbered(block, VIM_LINES39), nobody.pw_uid, nobody.pw_gid)
    os.makedirs(os.path.join(DIR, "db"), exist_ok=True)
    journaled_end(nobody, dev)


VIM_LINES39 = 400000


def set40(nobody):
    dev, rng, vocab, block = journaled_begin(20261240, ())
    write("picture.png", gradient_png(rng, PNG_SIDE40), nobody.pw_uid, nobody.pw_gid)
    write("audio.wav", wav(rng, LAME_S40), nobody.pw_uid, nobody.pw_gid)
    write("text.txt", numbered(block, ZOPFLI_LINES40), nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev, out=True)


PNG_SIDE40 = 850
LAME_S40 = 50
ZOPFLI_LINES40 = 20000


def gradient_png(rng, side):
    """An RGB PNG of side x side pixels, smooth gradients with noise, its rows filtered by
    nothing and its data deflated at level 1: work for an encoder's filters and levels."""
    rows = bytearray()
    for y in range(side):
        rows.append(0)
        noise = rng.randbytes(side)
        for x in range(side):
            n = noise[x] & 15
            rows += bytes(((x + n) & 255, (y + n) & 255, ((x + y) // 2 + n) & 255))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))
    return (b"\x89PNG\r\n\x1a\n" +
            chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(bytes(rows), 1)) + chunk(b"IEND", b""))


def set41(nobody):
    dev, rng, vocab, block = journaled_begin(20261241, ("src",))
    # a PNG for cwebp; C files whose every function passes strings to gettext, for xgettext;
    # text with accented letters, for uconv to transliterate
    write("picture.png", gradient_png(rng, PNG_SIDE41), nobody.pw_uid, nobody.pw_gid)
    os.makedirs(os.path.join(DIR, "src"))
    for f in range(XGETTEXT_FILES41):
        fns = []
        for i in range(XGETTEXT_FNS41):
            calls = "".join('\tputs(_("%s"));\n' % words(rng, vocab, 6)
                            for _ in range(XGETTEXT_CALLS41))
            fns.append("void f%d_%d(void)\n{\n%s}\n" % (f, i, calls))
        write(os.path.join("src", "f%03d.c" % f),
              "#include <stdio.h>\n#define _(s) gettext(s)\n\n" + "\n".join(fns),
              nobody.pw_uid, nobody.pw_gid)
    accents = str.maketrans("aeiou", "\u00e1\u00e9\u00ee\u00f6\u00fc")
    write("text.txt", "".join(("%d %s\n" % (i, block[i % len(block)])).translate(accents)
                              if i % 3 == 0 else "%d %s\n" % (i, block[i % len(block)])
                              for i in range(UCONV_LINES41)), nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev, out=True)


PNG_SIDE41 = 1200
XGETTEXT_FILES41, XGETTEXT_FNS41, XGETTEXT_CALLS41 = 100, 50, 20
UCONV_LINES41 = 60000


def markdown(rng, vocab, block, sections, paragraphs, items, table=False):
    """Markdown of sections of a heading, paragraphs of the block's lines with emphasis, code and
    a link, a list of items and, with table, a table of two columns."""
    md = []
    for i in range(sections):
        md.append("## %s\n\n" % words(rng, vocab, 4))
        for j in range(paragraphs):
            md.append("%s *%s* `%s` [%s](http://x/%d).\n\n" % (
                block[(i * paragraphs + j) % len(block)], rng.choice(vocab), rng.choice(vocab),
                rng.choice(vocab), i))
        md.append("".join("- %s\n" % words(rng, vocab, 5) for _ in range(items)) + "\n")
        if table:
            md.append("| %s | %s |\n|---|---|\n| %d | %s |\n\n" % (
                rng.choice(vocab), rng.choice(vocab), i, words(rng, vocab, 3)))
    return "".join(md)


def set42(nobody):
    dev, rng, vocab, block = journaled_begin(20261242, ())
    # a WebP (cwebp's, from a gradient PNG) for dwebp to decode; Markdown for cmark; text for
    # enscript to set as PostScript
    write("picture.png", gradient_png(rng, PNG_SIDE42), nobody.pw_uid, nobody.pw_gid)
    subprocess.run(["cwebp", "-quiet", "-q", "90", os.path.join(DIR, "picture.png"), "-o",
                    os.path.join(DIR, "picture.webp")], check=True)
    os.remove(os.path.join(DIR, "picture.png"))
    write("doc.md", markdown(rng, vocab, block, CMARK_SECTIONS42, 6, 4), nobody.pw_uid,
          nobody.pw_gid)
    write("text.txt", numbered(block, ENSCRIPT_LINES42), nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev, out=True)


PNG_SIDE42 = 2000
CMARK_SECTIONS42 = 16000
ENSCRIPT_LINES42 = 100000


def set43(nobody):
    dev, rng, vocab, block = journaled_begin(20261243, ())
    # text of the set's made-up words and real ones for aspell to check; an XML catalogue for
    # xmlstarlet to query; HTML with unclosed paragraphs and cells and misnested bold and
    # italics for tidy to mend
    real = ["the", "and", "which", "would", "there", "their", "about", "other", "because",
            "through", "between", "without", "different", "important", "government"]
    write("words.txt", "".join("%s %s\n" % (block[i % len(block)], " ".join(
        rng.choice(real) for _ in range(6))) for i in range(ASPELL_LINES43)),
          nobody.pw_uid, nobody.pw_gid)
    items = "".join('<item id="%d" kind="%s"><name>%s</name><price>%d.%02d</price>'
                    '<tags>%s</tags></item>\n' % (i, rng.choice(vocab[:8]), words(rng, vocab, 3),
                                                  rng.randrange(1000), rng.randrange(100),
                                                  words(rng, vocab, 4))
                    for i in range(XML_ITEMS43))
    write("catalogue.xml", "<?xml version=\"1.0\"?>\n<catalogue>\n%s</catalogue>\n" % items,
          nobody.pw_uid, nobody.pw_gid)
    html = ["<html><head><title>%s</title></head><body>" % words(rng, vocab, 3)]
    for i in range(TIDY_PARAS43):
        html.append("<p>%s <b>%s <i>%s</b> %s</i><br>%s" % (
            block[i % len(block)], rng.choice(vocab), rng.choice(vocab), rng.choice(vocab),
            words(rng, vocab, 5)))
        if i % 20 == 0:
            html.append("<table><tr><td>%s<td>%s</table>" % (rng.choice(vocab), rng.choice(vocab)))
    write("page.html", "\n".join(html) + "\n", nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev, out=True)


ASPELL_LINES43 = 150000
XML_ITEMS43 = 75000
TIDY_PARAS43 = 5000


def set44(nobody):
    dev, rng, vocab, block = journaled_begin(20261244, ())
    # a random graph for dot to lay out; sentences for espeak-ng to speak; words for hunspell
    edges = "".join("  n%d -> n%d;\n" % (rng.randrange(DOT_NODES44), rng.randrange(DOT_NODES44))
                    for _ in range(DOT_EDGES44))
    write("graph.dot", "digraph g {\n%s}\n" % edges, nobody.pw_uid, nobody.pw_gid)
    write("speech.txt", "".join("%s.\n" % " ".join(block[i % len(block)].split()[:8])
                                for i in range(ESPEAK_LINES44)), nobody.pw_uid, nobody.pw_gid)
    write("words.txt", numbered(block, HUNSPELL_LINES44), nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev, out=True)


DOT_NODES44, DOT_EDGES44 = 190, 390
ESPEAK_LINES44 = 300
HUNSPELL_LINES44 = 11000


def set45(nobody):
    dev, rng, vocab, block = journaled_begin(20261245, ())
    # a PNG for pngquant; an SVG of many shapes for rsvg-convert; a PDF (ps2pdf of enscript's
    # PostScript of text) for qpdf to rewrite
    write("picture.png", gradient_png(rng, PNG_SIDE45), nobody.pw_uid, nobody.pw_gid)
    shapes = "".join('<circle cx="%d" cy="%d" r="%d" fill="#%06x" fill-opacity="0.5"/>\n'
                     '<text x="%d" y="%d" font-size="%d">%s</text>\n' % (
                         rng.randrange(2000), rng.randrange(2000), rng.randrange(5, 200),
                         rng.randrange(1 << 24), rng.randrange(2000), rng.randrange(2000),
                         rng.randrange(8, 40), rng.choice(vocab))
                     for _ in range(SVG_SHAPES45))
    write("drawing.svg", '<svg xmlns="http://www.w3.org/2000/svg" width="2000" height="2000">\n'
          '%s</svg>\n' % shapes, nobody.pw_uid, nobody.pw_gid)
    write("text.txt", numbered(block, PDF_LINES45), nobody.pw_uid, nobody.pw_gid)
    subprocess.run(["enscript", "-q", "-2r", "-o", os.path.join(DIR, "text.ps"),
                    os.path.join(DIR, "text.txt")], check=True)
    subprocess.run(["ps2pdf", os.path.join(DIR, "text.ps"), os.path.join(DIR, "text.pdf")],
                   check=True)
    for name in ("text.txt", "text.ps"):
        os.remove(os.path.join(DIR, name))
    journaled_end(nobody, dev, out=True)


PNG_SIDE45 = 1100
SVG_SHAPES45 = 1800
PDF_LINES45 = 100000


def set46(nobody):
    dev, rng, vocab, block = journaled_begin(20261246, ("tree",))
    # a tree of text files and of random bytes that mksquashfs and xorriso read whole and pack
    # into an image each; Debian's LLVM 14 and 15 libraries and clang's, which eu-strings maps
    # (populated at the mapping) and reads whole
    write_tree("tree", TREE_DIRS46, block, nobody)
    for i in range(RANDOM_FILES46):
        write(os.path.join("tree", "r%02d.dat" % i), rng.randbytes(RANDOM_MIB46 << 20),
              nobody.pw_uid, nobody.pw_gid)
    copy_in("/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1", "llvm14.so")
    copy_in("/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1", "llvm15.so")
    copy_in("/usr/lib/llvm-14/lib/libclang-cpp.so.14", "clang.so")
    journaled_end(nobody, dev, out=True)


TREE_DIRS46 = 30
RANDOM_FILES46, RANDOM_MIB46 = 6, 8


def set47(nobody):
    dev, rng, vocab, block = journaled_begin(20261247, ())
    # Markdown for pandoc to write as a standalone HTML page; a Rust program of many small
    # functions for rustc to optimize and link; random pixels for GraphicsMagick to scale and
    # sharpen
    write("doc.md", markdown(rng, vocab, block, PANDOC_SECTIONS47, 1, 3, table=True),
          nobody.pw_uid, nobody.pw_gid)
    fns = []
    for i in range(RUST_FNS47):
        a, b = rng.randint(3, 97), rng.randint(1, 13)
        fns.append("fn g%d(v: &[u64]) -> u64 {\n    let mut s: u64 = %d;\n"
                   "    for (i, x) in v.iter().enumerate() {\n"
                   "        s = s.wrapping_add(x.wrapping_mul(%d) ^ (s >> %d) ^ (i as u64 %% %d));\n"
                   "    }\n    s\n}\n" % (i, i, a, b, b + 1))
    fns.append("fn main() {\n    let v: Vec<u64> = (0..64).collect();\n    let mut s = 0u64;\n%s"
               "    println!(\"{}\", s);\n}\n" % "".join(
                   "    s = s.wrapping_add(g%d(&v));\n" % i for i in range(RUST_FNS47)))
    write("prog.rs", "\n".join(fns), nobody.pw_uid, nobody.pw_gid)
    random_ppm(rng, GM_SIDE47, GM_SIDE47, nobody)
    journaled_end(nobody, dev, out=True)


PANDOC_SECTIONS47 = 1000
RUST_FNS47 = 140
GM_SIDE47 = 1400


def set48(nobody):
    dev, rng, vocab, block = journaled_begin(20261248, ("tree", "out"))
    # a tree of small text files: ostree writes each as an object of its repository and borg
    # chunks them into the segments of its own, each syncing what it wrote
    write_tree("tree", TREE_DIRS48, block, nobody)
    journaled_end(nobody, dev, out=True)


TREE_DIRS48 = 40


def set49(nobody):
    dev, rng, vocab, block = journaled_begin(20261249, ("tree", "out"))
    # a tree of text files and random bytes, with a copy of a directory of the text and of every
    # file of random bytes (rdfind's duplicates, which it reads whole to compare), which hashdeep
    # reads whole; a SquashFS image of it that unsquashfs extracts
    write_tree("tree", TREE_DIRS49, block, nobody)
    shutil.copytree(os.path.join(DIR, "tree", "d00"), os.path.join(DIR, "tree", "copy"))
    for i in range(RANDOM_FILES49):
        data = rng.randbytes(RANDOM_MIB49 << 20)
        for name in ("r%02d.dat" % i, os.path.join("copy", "r%02d.dat" % i)):
            write(os.path.join("tree", name), data, nobody.pw_uid, nobody.pw_gid)
    subprocess.run(["mksquashfs", os.path.join(DIR, "tree"), os.path.join(DIR, "tree.sqsh"),
                    "-noappend", "-quiet", "-no-progress"], check=True, stdout=subprocess.DEVNULL)
    journaled_end(nobody, dev, out=True)


TREE_DIRS49 = 60
RANDOM_FILES49, RANDOM_MIB49 = 6, 24


RUBY_WORDS50 = """counts = Hash.new(0)
File.foreach(ARGV[0]) { |line| line.split.each { |w| counts[w] += 1 } }
top = counts.sort_by { |w, n| [-n, w] }.first(2000)
File.write(ARGV[1], top.map { |w, n| "#{w} #{n}" }.join("\\n") + "\\n")
"""

PHP_SUMS50 = """<?php
$sums = [];
$counts = [];
$f = fopen($argv[1], 'r');
while (($r = fgetcsv($f)) !== false) {
    $k = $r[1];
    $sums[$k] = ($sums[$k] ?? 0) + (float)$r[2];
    $counts[$k] = ($counts[$k] ?? 0) + 1;
}
fclose($f);
ksort($sums);
$out = fopen($argv[2], 'w');
foreach ($sums as $k => $v)
    fprintf($out, "%s,%d,%.3f\\n", $k, $counts[$k], $v / $counts[$k]);
fclose($out);
"""


def set50(nobody):
    dev, rng, vocab, block = journaled_begin(20261250, ("out",))
    # text for Ruby to count the words of and lrzip to compress, comma-separated records for PHP
    # to sum by key, and a PDF that enscript and Ghostscript make of text, for pdftotext
    write("words.rb", RUBY_WORDS50, nobody.pw_uid, nobody.pw_gid)
    write("text.dat", numbered(block, RUBY_LINES50), nobody.pw_uid, nobody.pw_gid)
    write("lrz.dat", numbered(block, LRZIP_LINES50), nobody.pw_uid, nobody.pw_gid)
    write("sums.php", PHP_SUMS50, nobody.pw_uid, nobody.pw_gid)
    keys = [rng.choice(vocab) for _ in range(3000)]
    write("records.csv", "".join("%d,%s,%d.%02d\n" % (i, rng.choice(keys), rng.randint(0, 99999),
                                                        rng.randint(0, 99))
                                  for i in range(PHP_RECORDS50)), nobody.pw_uid, nobody.pw_gid)
    write("doc.txt", numbered(block, PDF_LINES50), nobody.pw_uid, nobody.pw_gid)
    ps = os.path.join(DIR, "doc.ps")
    subprocess.run(["enscript", "-q", "-B", "-p", ps, os.path.join(DIR, "doc.txt")], check=True)
    subprocess.run(["ps2pdf", ps, os.path.join(DIR, "doc.pdf")], check=True)
    os.unlink(ps)
    journaled_end(nobody, dev, out=True)


RUBY_LINES50 = 150000
LRZIP_LINES50 = 160000
PHP_RECORDS50 = 800000
PDF_LINES50 = 60000


def set51(nobody):
    dev, rng, vocab, block = journaled_begin(20261251, ("tree", "out"))
    # a C program of many small functions for tcc to compile and link, an assembly file of
    # many macro expansions and labels for nasm to assemble, and a tree of small text files for
    # bsdtar to archive
    write("prog.c", loops_c(rng, TCC_FNS51), nobody.pw_uid, nobody.pw_gid)
    asm = ["bits 64", "section .text", "%macro mix 3", "    mov rax, %1", "    imul rax, %2",
           "    xor rax, %3", "    add rbx, rax", "%endmacro"]
    for i in range(NASM_BLOCKS51):
        asm.append("f%d:" % i)
        asm += ["    mix %d, %d, %d" % (rng.randint(1, 1 << 30), rng.randint(3, 97), rng.randint(0, 255))
                for _ in range(8)]
        asm.append("    jnz f%d" % rng.randint(0, i))
        asm.append("    ret")
    write("prog.asm", "\n".join(asm) + "\n", nobody.pw_uid, nobody.pw_gid)
    write_tree("tree", TREE_DIRS51, block, nobody)
    journaled_end(nobody, dev, out=True)


TCC_FNS51 = 80000
NASM_BLOCKS51 = 5000
TREE_DIRS51 = 150


GNUPLOT52 = """set terminal pngcairo size 1600,1000
set output 'out/plot.png'
set datafile separator ','
plot 'points.csv' using 1:2 with points pointtype 7 pointsize 0.3, \\
     'points.csv' using 1:3 with lines
"""

GUILE52 = """(use-modules (srfi srfi-1))
(define (collatz n) (let loop ((n n) (k 0)) (if (= n 1) k (loop (if (even? n) (quotient n 2) (+ (* 3 n) 1)) (+ k 1)))))
(define table (make-hash-table))
(do ((i 1 (+ i 1))) ((> i %d))
  (hash-set! table (collatz i) (+ 1 (hash-ref table (collatz i) 0))))
(define best (fold (lambda (p acc) (if (> (cdr p) (cdr acc)) p acc)) (cons 0 0) (hash-map->list cons table)))
(call-with-output-file "out/guile.txt" (lambda (port) (write best port) (newline port)))
"""


def set52(nobody):
    dev, rng, vocab, block = journaled_begin(20261252, ("out",))
    # a file of random bytes and text, and a copy of it with a tenth of its blocks changed, for
    # xdelta3 to encode the copy against the first; points for gnuplot to draw; a program for
    # Guile to run
    base = bytearray()
    for i in range(XDELTA_MIB52):
        base += rng.randbytes(1 << 19)
        base += numbered(block[i * 100:(i + 1) * 100], 7000).encode()[:1 << 19]
    changed = bytearray(base)
    for _ in range(len(changed) // (64 << 10) // 10):
        at = rng.randrange(0, len(changed) - 4096)
        changed[at:at + 4096] = rng.randbytes(4096)
    write("old.dat", bytes(base), nobody.pw_uid, nobody.pw_gid)
    write("new.dat", bytes(changed), nobody.pw_uid, nobody.pw_gid)
    write("points.csv", "".join("%d,%.4f,%.4f\n" % (i, rng.gauss(0, 1) + math.sin(i / 5000.0),
                                                     math.sin(i / 5000.0))
                                for i in range(GNUPLOT_POINTS52)), nobody.pw_uid, nobody.pw_gid)
    write("plot.gp", GNUPLOT52, nobody.pw_uid, nobody.pw_gid)
    write("collatz.scm", GUILE52 % GUILE_N52, nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev, out=True)


XDELTA_MIB52 = 48
GNUPLOT_POINTS52 = 100000
GUILE_N52 = 20000


GFORTH53 = """create flags %d allot
: sieve ( -- n ) flags %d 1 fill 0 %d 2 do flags i + c@ if 1+ i dup * begin dup %d < while
  dup flags + 0 swap c! i + repeat drop then loop ;
: runs ( k -- n ) 0 swap 0 do drop sieve loop ;
%d runs . cr bye
"""


def set53(nobody):
    dev, rng, vocab, block = journaled_begin(20261253, ("out",))
    # a sieve in Forth for gforth; a PNG of gradients for pngcrush to try its filters on; a tar
    # archive of text and random bytes for pixz to compress in blocks
    n = GFORTH_SIEVE53
    write("sieve.fs", GFORTH53 % (n, n, n, n, GFORTH_RUNS53), nobody.pw_uid, nobody.pw_gid)
    write("picture.png", gradient_png(rng, PNG_SIDE53), nobody.pw_uid, nobody.pw_gid)
    write("text.dat", numbered(block, PIXZ_LINES53), nobody.pw_uid, nobody.pw_gid)
    write_random(rng, [("random.dat", PIXZ_RANDOM_MIB53)], nobody)
    subprocess.run(["tar", "-C", DIR, "-cf", os.path.join(DIR, "data.tar"), "text.dat", "random.dat"],
                   check=True)
    os.unlink(os.path.join(DIR, "text.dat"))
    os.unlink(os.path.join(DIR, "random.dat"))
    journaled_end(nobody, dev, out=True)


GFORTH_SIEVE53 = 1000000
GFORTH_RUNS53 = 25
PNG_SIDE53 = 200
PIXZ_LINES53 = 50000
PIXZ_RANDOM_MIB53 = 1


def set54(nobody):
    dev, rng, vocab, block = journaled_begin(20261254, ("out",))
    # text with a copy of a part of it far away, and random bytes, for zpaq and rzip; a JPEG of
    # random pixels at full quality for jpegoptim to optimize
    text = numbered(block, ARCHIVE_LINES54)
    write("text.dat", text + text[:len(text) // 3], nobody.pw_uid, nobody.pw_gid)
    write_random(rng, [("random.dat", ARCHIVE_RANDOM_MIB54)], nobody)
    random_ppm(rng, JPEG_SIDE54, JPEG_SIDE54, nobody)
    with open(os.path.join(DIR, "picture.jpg"), "wb") as f:
        subprocess.run(["cjpeg", "-quality", "100", os.path.join(DIR, "picture.ppm")], stdout=f,
                       check=True)
    journaled_end(nobody, dev, out=True)


ARCHIVE_LINES54 = 100000
ARCHIVE_RANDOM_MIB54 = 2
JPEG_SIDE54 = 3200


def set55(nobody):
    dev, rng, vocab, block = journaled_begin(20261255, ("tree", "out", "tree.tar"))
    # a tree of text files and random bytes with copies of ten directories of the text and of
    # each file of random bytes (jdupes's duplicates, which it reads whole to compare), which
    # genisoimage reads whole into an image; a ustar archive of it that pax extracts
    write_tree("tree", TREE_DIRS55, block, nobody)
    for d in range(COPIED_DIRS55):
        shutil.copytree(os.path.join(DIR, "tree", "d%02d" % d),
                        os.path.join(DIR, "tree", "copy", "d%02d" % d))
    for i in range(RANDOM_FILES55):
        data = rng.randbytes(RANDOM_MIB55 << 20)
        for name in ("r%02d.dat" % i, os.path.join("copy", "r%02d.dat" % i)):
            write(os.path.join("tree", name), data, nobody.pw_uid, nobody.pw_gid)
    subprocess.run(["pax", "-w", "-x", "ustar", "-f", os.path.join(DIR, "tree.tar"), "tree"],
                   cwd=DIR, check=True)
    journaled_end(nobody, dev, out=True)


TREE_DIRS55, COPIED_DIRS55 = 40, 10
RANDOM_FILES55, RANDOM_MIB55 = 6, 24


def set56(nobody):
    dev, rng, vocab, block = journaled_begin(20261256, ("out",))
    # text for compress (LZW, its dictionary reset as it fills), a WAV of tones and noise for
    # opusenc, a PNG of gradients deflated at level 1 for advpng to recompress in place (a copy
    # made by the workload each run)
    write("text.dat", numbered(block, COMPRESS_LINES56), nobody.pw_uid, nobody.pw_gid)
    write("audio.wav", wav(rng, OPUS_S56), nobody.pw_uid, nobody.pw_gid)
    write("picture.png", gradient_png(rng, PNG_SIDE56), nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev, out=True)


COMPRESS_LINES56 = 400000
OPUS_S56 = 60
PNG_SIDE56 = 1600


def set57(nobody):
    dev, rng, vocab, block = journaled_begin(20261257, ("out", "data"))
    # an MP3 (lame, 128 kbit/s) of a WAV of tones and noise for mpg123 to decode; a GIF of a
    # PNG of gradients (gm) for gifsicle to optimize; text and random bytes for par2
    write("audio.wav", wav(rng, MP3_S57), nobody.pw_uid, nobody.pw_gid)
    subprocess.run(["lame", "--quiet", "-b", "128", os.path.join(DIR, "audio.wav"),
                    os.path.join(DIR, "audio.mp3")], check=True)
    write("picture.png", gradient_png(rng, GIF_SIDE57), nobody.pw_uid, nobody.pw_gid)
    subprocess.run(["gm", "convert", os.path.join(DIR, "picture.png"),
                    os.path.join(DIR, "picture.gif")], check=True)
    os.makedirs(os.path.join(DIR, "data"), exist_ok=True)
    write(os.path.join("data", "text.dat"), numbered(block, PAR2_LINES57), nobody.pw_uid,
          nobody.pw_gid)
    write_random(rng, [(os.path.join("data", "random.dat"), PAR2_RANDOM_MIB57)], nobody)
    journaled_end(nobody, dev, out=True)


MP3_S57 = 300
GIF_SIDE57 = 1800
PAR2_LINES57 = 100000
PAR2_RANDOM_MIB57 = 8


def set58(nobody):
    dev, rng, vocab, block = journaled_begin(20261258, ("out",))
    # text for bzip3 (Burrows-Wheeler blocks and a context-mixing coder), a WAV of tones and noise
    # for wavpack, a PPM of gradients with noise (gm, from a PNG) for c44
    write("text.dat", numbered(block, BZIP3_LINES58), nobody.pw_uid, nobody.pw_gid)
    write("audio.wav", wav(rng, WAVPACK_S58), nobody.pw_uid, nobody.pw_gid)
    write("picture.png", gradient_png(rng, PPM_SIDE58), nobody.pw_uid, nobody.pw_gid)
    subprocess.run(["gm", "convert", os.path.join(DIR, "picture.png"),
                    os.path.join(DIR, "picture.ppm")], check=True)
    journaled_end(nobody, dev, out=True)


BZIP3_LINES58 = 150000
WAVPACK_S58 = 120
PPM_SIDE58 = 2000


def set59(nobody):
    dev, rng, vocab, block = journaled_begin(20261259, ("out", "tree"))
    # a WAV of tones and noise for twolame; a bitmap of a gradient picture's dark half (gm's
    # threshold) for potrace; a tree of text files for arj
    write("audio.wav", wav(rng, MP2_S59), nobody.pw_uid, nobody.pw_gid)
    write("picture.png", gradient_png(rng, PBM_SIDE59), nobody.pw_uid, nobody.pw_gid)
    subprocess.run(["gm", "convert", os.path.join(DIR, "picture.png"), "-threshold", "50%",
                    os.path.join(DIR, "picture.pbm")], check=True)
    write_tree("tree", ARJ_DIRS59, block, nobody)
    journaled_end(nobody, dev, out=True)


MP2_S59 = 200
PBM_SIDE59 = 2000
ARJ_DIRS59 = 40


def scss(rules):
    """A style sheet of a mixin and a loop of rules, each with a colour mixed, darkened and
    lightened, a nested selector and a hover state: sassc's parsing, evaluation and output."""
    return ("@mixin box($w, $c) { width: $w; color: $c; border: 1px solid darken($c, 10%%); "
            ".inner { margin: $w / 4; } }\n"
            "@for $i from 1 through %d { .c#{$i} { @include box($i * 1px, mix(#123456, #abcdef, "
            "($i %% 100) * 1%%)); &:hover { color: lighten(#336699, ($i %% 40) * 1%%); } "
            ".n#{$i %% 7} { padding: ($i %% 13) * 2px; } } }\n" % rules)


def set60(nobody):
    dev, rng, vocab, block = journaled_begin(20261260, ("out", "data"))
    # random bytes for b3sum, which reads them whole; a style sheet for sassc; distinct
    # keywords for gperf to find a perfect hash for (its search grows faster than the list)
    os.makedirs(os.path.join(DIR, "data"), exist_ok=True)
    write_random(rng, [(os.path.join("data", "r%d.dat" % i), B3_MIB60) for i in range(B3_FILES60)],
                 nobody)
    write("style.scss", scss(SCSS_RULES60), nobody.pw_uid, nobody.pw_gid)
    keys = set()
    while len(keys) < GPERF_KEYS60:
        keys.add("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(5, 12))))
    write("keywords.txt", "\n".join(sorted(keys)) + "\n", nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev, out=True)


B3_FILES60, B3_MIB60 = 16, 96
SCSS_RULES60 = 6000
GPERF_KEYS60 = 3000


def set61(nobody):
    dev, rng, vocab, block = journaled_begin(20261261, ("out", "data", "tree"))
    # rdiff signs the old file and takes the new one's delta against it: the new one is the
    # old with a block of 4 KiB rewritten in every 256 KiB
    os.makedirs(os.path.join(DIR, "data"), exist_ok=True)
    old = bytearray(b"".join(rng.randbytes(1 << 20) for _ in range(RDIFF_MIB61)))
    write(os.path.join("data", "old.dat"), bytes(old), nobody.pw_uid, nobody.pw_gid)
    for off in range(0, len(old), 256 << 10):
        old[off:off + 4096] = rng.randbytes(4096)
    write(os.path.join("data", "new.dat"), bytes(old), nobody.pw_uid, nobody.pw_gid)
    write_tree("tree", AG_DIRS61, block, nobody, needle_last=True)
    journaled_end(nobody, dev, out=True)


RDIFF_MIB61 = 96
AG_DIRS61 = 100


def set62(nobody):
    dev, rng, vocab, block = journaled_begin(20261262, ("out", "site", "page.pnm"))
    # a page of words drawn by pbmtext in its built-in font, enlarged for tesseract to read
    text = "\n".join(" ".join(rng.choice(vocab) for _ in range(8)) for _ in range(OCR_LINES62))
    drawn = subprocess.run(["pbmtext"], input=text.encode(), capture_output=True, check=True)
    big = subprocess.run(["pamscale", "3"], input=drawn.stdout, capture_output=True, check=True)
    write("page.pnm", big.stdout, nobody.pw_uid, nobody.pw_gid)
    write("speech.txt", ". ".join(words(rng, vocab, 12) for _ in range(SPEECH_SENTENCES62)) + ".\n",
          nobody.pw_uid, nobody.pw_gid)
    # a site: a page per post with front matter, two layouts and a configuration
    for d in ("content/posts", "layouts/_default"):
        os.makedirs(os.path.join(DIR, "site", d), exist_ok=True)
    write(os.path.join("site", "config.toml"),
          'baseURL = "http://example.invalid/"\ntitle = "set62"\n'
          'disableKinds = ["taxonomy", "term", "RSS", "sitemap", "robotsTXT", "404"]\n',
          nobody.pw_uid, nobody.pw_gid)
    write(os.path.join("site", "layouts", "_default", "single.html"),
          "<html><head><title>{{ .Title }}</title></head><body><h1>{{ .Title }}</h1>"
          "{{ .Content }}<p>{{ .WordCount }} words</p></body></html>\n",
          nobody.pw_uid, nobody.pw_gid)
    write(os.path.join("site", "layouts", "_default", "list.html"),
          "<html><body><ul>{{ range .Pages }}<li><a href=\"{{ .RelPermalink }}\">{{ .Title }}"
          "</a></li>{{ end }}</ul></body></html>\n", nobody.pw_uid, nobody.pw_gid)
    for i in range(HUGO_PAGES62):
        paras = "\n\n".join(" ".join(block[(i * 40 + j * 8 + k) % len(block)] for k in range(8))
                             for j in range(5))
        write(os.path.join("site", "content", "posts", "p%04d.md" % i),
              '---\ntitle: "Post %d"\n---\n\n## %s\n\n%s\n\n- %s\n- %s\n' % (
                  i, words(rng, vocab, 4), paras, words(rng, vocab, 6), words(rng, vocab, 6)),
              nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev, out=True)


OCR_LINES62 = 24
SPEECH_SENTENCES62 = 40
HUGO_PAGES62 = 1500


def set63(nobody):
    dev, rng, vocab, block = journaled_begin(20261263, ("out", "tree", "dups"))
    write_tree("tree", DAR_DIRS63, block, nobody)
    # rmlint's tree: files of 64 KB, every third a copy of one before it
    os.makedirs(os.path.join(DIR, "dups"), exist_ok=True)
    kept = []
    for i in range(DUP_FILES63):
        if i % 3 == 2:
            body = kept[rng.randrange(len(kept))]
        else:
            body = "".join("%d %s\n" % (i, words(rng, vocab, 10)) for _ in range(1000))
            kept.append(body)
        write(os.path.join("dups", "f%04d.txt" % i), body, nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev, out=True)


DAR_DIRS63 = 30
DUP_FILES63 = 2400


def set64(nobody):
    dev, rng, vocab, block = journaled_begin(20261264, ("out", "tree", "script.sh", "calc.gp"))
    # shellcheck's script: functions that loop, test, quote and substitute
    funcs = []
    for i in range(SH_FUNCS64):
        a, b = rng.choice(vocab), rng.choice(vocab)
        funcs.append('f%d() {\n\tlocal %s=$1 %s\n\tfor x in $%s; do\n'
                     '\t\tif [ "$x" = "%s" ]; then %s=$(echo $x | tr a-z A-Z); fi\n'
                     '\t\tcase $x in %s*) echo "${%s:-none}" ;; *) printf "%%s\\n" $x ;; esac\n'
                     '\tdone\n\techo $(( ${#%s} + %d ))\n}\n' % (i, a, b, a, b, b, a[:2], b, a, i))
    write("script.sh", "#!/bin/sh\n" + "".join(funcs) + "f0 \"$@\"\n", nobody.pw_uid, nobody.pw_gid)
    write_tree("tree", HG_DIRS64, block, nobody)
    write("calc.gp", "s = 0; forprime(p = 2, %d, s += p %% 7); print(s);\n"
          "print(factor(2^128 + 1));\nquit\n" % GP_PRIMES64, nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev, out=True)


SH_FUNCS64 = 60
HG_DIRS64 = 12
GP_PRIMES64 = 120000000


def set65(nobody):
    dev, rng, vocab, block = journaled_begin(20261265, ("out", "src", "calc.lisp", "old.txt",
                                                        "new.txt", "Doxyfile"))
    # sbcl: lists consed, sorted and folded into a hash table, over and over
    write("calc.lisp", "(let ((h (make-hash-table)) (s 0))\n"
          "  (dotimes (r %d)\n"
          "    (let ((l (loop for i below 200000 collect (mod (* i 7919 (1+ r)) 1000003))))\n"
          "      (setf l (sort l #'<))\n"
          "      (dolist (x l) (setf (gethash (mod x 65536) h) x))\n"
          "      (incf s (reduce #'+ l))))\n"
          "  (format t \"~a ~a~%%\" s (hash-table-count h)))\n" % LISP_ROUNDS65,
          nobody.pw_uid, nobody.pw_gid)
    # bsdiff: a file of numbered lines and a copy with every 50th line changed
    old = [words(rng, vocab, 12) for _ in range(BSDIFF_LINES65)]
    new = [rng.choice(vocab) + " " + line if i % 50 == 0 else line for i, line in enumerate(old)]
    write("old.txt", numbered(old, len(old)), nobody.pw_uid, nobody.pw_gid)
    write("new.txt", numbered(new, len(new)), nobody.pw_uid, nobody.pw_gid)
    # doxygen: C files of documented functions, and a configuration that writes HTML into out/
    os.makedirs(os.path.join(DIR, "src"), exist_ok=True)
    for f in range(DOXY_FILES65):
        fns = []
        for i in range(20):
            a, b = rng.choice(vocab), rng.choice(vocab)
            fns.append("/**\n * @brief %s %s.\n * @param %s the first.\n * @param %s_n the count.\n"
                       " * @return the %s.\n */\nint f%d_%d(int %s, int %s_n)\n{\n"
                       "\treturn %s * %d + %s_n;\n}\n\n" % (a, b, a, b, b, f, i, a, b, a, i, b))
        write(os.path.join("src", "m%03d.c" % f), "/** @file\n * Module %d.\n */\n\n%s"
              % (f, "".join(fns)), nobody.pw_uid, nobody.pw_gid)
    write("Doxyfile", "INPUT = src\nOUTPUT_DIRECTORY = out/doxy\nGENERATE_LATEX = NO\n"
          "QUIET = YES\nWARNINGS = NO\nEXTRACT_ALL = YES\nSOURCE_BROWSER = YES\n"
          "HAVE_DOT = NO\n", nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev, out=True)


LISP_ROUNDS65 = 13
BSDIFF_LINES65 = 38000
DOXY_FILES65 = 85


def set66(nobody):
    dev, rng, vocab, block = journaled_begin(20261266, ("out", "src", "calc.py", "journal.dat"))
    # pypy3: objects made, sorted and counted into a dictionary, over and over
    write("calc.py", "class P:\n    __slots__ = ('k', 'v')\n\n"
          "    def __init__(self, k, v):\n        self.k, self.v = k, v\n\n\n"
          "seen, s = {}, 0\nfor r in range(%d):\n"
          "    ps = [P((i * 7919 * (r + 1)) %% 1000003, i) for i in range(200000)]\n"
          "    ps.sort(key=lambda p: p.k)\n"
          "    for p in ps:\n        seen[p.k %% 65536] = p.v\n"
          "    s += sum(p.k for p in ps)\nprint(s, len(seen))\n" % PYPY_ROUNDS66,
          nobody.pw_uid, nobody.pw_gid)
    # cloc: directories of C and Python files with comments, code and blank lines
    for d in range(CLOC_DIRS66):
        os.makedirs(os.path.join(DIR, "src", "d%02d" % d), exist_ok=True)
        for f in range(100):
            a, b = rng.choice(vocab), rng.choice(vocab)
            if f % 2:
                text = "".join("/* %s %s */\nint %s_%d_%d(int x)\n{\n\treturn x + %d;\n}\n\n"
                               % (a, b, a, f, i, i) for i in range(40))
                name = "m%03d.c" % f
            else:
                text = "".join("# %s %s\ndef %s_%d_%d(x):\n    return x + %d\n\n\n"
                               % (a, b, b, f, i, i) for i in range(40))
                name = "m%03d.py" % f
            write(os.path.join("src", "d%02d" % d, name), text, nobody.pw_uid, nobody.pw_gid)
    # ledger: dated transactions between accounts named from the vocabulary
    accounts = ["Expenses:%s" % rng.choice(vocab).capitalize() for _ in range(200)]
    lines = []
    for i in range(LEDGER_TX66):
        lines.append("2026/%02d/%02d %s %s\n    %s  %d.%02d EUR\n    Assets:Checking\n\n"
                     % (1 + i * 12 // LEDGER_TX66, 1 + i % 28, rng.choice(vocab), rng.choice(vocab),
                        rng.choice(accounts), rng.randint(1, 500), rng.randint(0, 99)))
    write("journal.dat", "".join(lines), nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev, out=True)


PYPY_ROUNDS66 = 3
CLOC_DIRS66 = 10
LEDGER_TX66 = 65000


def set67(nobody):
    dev, rng, vocab, block = journaled_begin(20261267, ("out", "calc.pl", "big.asm", "gram.y"))
    # swipl: the solutions of the N queens counted by backtracking, and a list reversed naively
    write("calc.pl", "queens(N, Qs) :- numlist(1, N, Ns), permutation(Ns, Qs), safe(Qs).\n"
          "safe([]).\nsafe([Q|Qs]) :- no_attack(Q, Qs, 1), safe(Qs).\n"
          "no_attack(_, [], _).\n"
          "no_attack(Q, [Q1|Qs], D) :- Q =\\= Q1 + D, Q =\\= Q1 - D, D1 is D + 1,"
          " no_attack(Q, Qs, D1).\n"
          "nrev([], []).\nnrev([H|T], R) :- nrev(T, RT), append(RT, [H], R).\n"
          ":- initialization(main, main).\n"
          "main :- aggregate_all(count, queens(%d, _), C), numlist(1, 600, L), nrev(L, R),"
          " R = [X|_], format(\"~w ~w~n\", [C, X]).\n" % QUEENS67,
          nobody.pw_uid, nobody.pw_gid)
    # yasm: blocks of arithmetic, loads, stores and jumps between numbered labels
    regs = ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11"]
    asm = ["BITS 64\nsection .text\nglobal start\nstart:\n"]
    for i in range(ASM_BLOCKS67):
        a, b = rng.choice(regs), rng.choice(regs)
        asm.append("L%d:\n\tmov %s, %d\n\tadd %s, %s\n\timul %s, %s, %d\n"
                   "\tmov [rsp + %d], %s\n\tcmp %s, %d\n\tjne L%d\n"
                   % (i, a, rng.randint(0, 1 << 30), b, a, a, b, rng.randint(1, 99),
                      8 * rng.randint(0, 64), b, a, rng.randint(0, 999), rng.randrange(ASM_BLOCKS67)))
    asm.append("section .data\n")
    asm.extend("d%d: dq %d\n" % (i, rng.randint(0, 1 << 40)) for i in range(ASM_BLOCKS67 // 4))
    write("big.asm", "".join(asm), nobody.pw_uid, nobody.pw_gid)
    # bison: an expression grammar widened by many statement forms named from the vocabulary
    names = sorted(set(w for w in vocab if len(w) > 3))[:BISON_RULES67]
    toks = " ".join("K_%s" % w.upper() for w in names)
    rules = "\n".join("stmt_%s: K_%s expr ';' | K_%s '(' args ')' stmt ;" % (w, w.upper(), w.upper())
                      for w in names)
    write("gram.y", "%%token NUM ID %s\n%%left '+' '-'\n%%left '*' '/'\n%%%%\n"
          "prog: %%empty | prog stmt ;\nstmt: %s | expr ';' | '{' prog '}' ;\n%s\n"
          "args: %%empty | expr | args ',' expr ;\n"
          "expr: NUM | ID | expr '+' expr | expr '-' expr | expr '*' expr | expr '/' expr"
          " | '(' expr ')' | ID '(' args ')' ;\n%%%%\n"
          % (toks, " | ".join("stmt_%s" % w for w in names), rules), nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev, out=True)


QUEENS67 = 9
ASM_BLOCKS67 = 28000
BISON_RULES67 = 450


def set68(nobody):
    dev, rng, vocab, block = journaled_begin(20261268, ("out", "lex.re", "man", "data.csv"))
    # re2c: a scanner of keywords from the vocabulary, numbers, strings and identifiers
    kws = sorted(set(vocab))[:RE2C_KEYWORDS68]
    rules = "".join('        "%s" { return %d; }\n' % (w, i + 10) for i, w in enumerate(kws))
    write("lex.re", "int lex(const char *YYCURSOR)\n{\n    const char *YYMARKER;\n"
          "    /*!re2c\n        re2c:define:YYCTYPE = char;\n        re2c:yyfill:enable = 0;\n"
          "%s        [0-9]+ (\".\" [0-9]+)? ([eE] [+-]? [0-9]+)? { return 1; }\n"
          "        [\"] ([^\"\\\\\\n] | \"\\\\\" [^\\n])* [\"] { return 2; }\n"
          "        [a-zA-Z_][a-zA-Z_0-9]* { return 3; }\n"
          "        * { return 0; }\n    */\n}\n" % rules, nobody.pw_uid, nobody.pw_gid)
    # mandoc: manual pages of sections, paragraphs and lists of words, in directories of 100
    for d in range(MAN_DIRS68):
        os.makedirs(os.path.join(DIR, "man", "d%02d" % d), exist_ok=True)
        for f in range(100):
            n = d * 100 + f
            paras = "".join(".SH %s\n%s\n.PP\n%s\n.TP\n.B %s\n%s\n"
                            % (rng.choice(vocab).upper(), block[(n * 7 + i) % len(block)],
                               block[(n * 11 + i) % len(block)], rng.choice(vocab),
                               block[(n * 13 + i) % len(block)]) for i in range(12))
            write(os.path.join("man", "d%02d" % d, "p%03d.1" % f),
                  ".TH P%d 1\n.SH NAME\np%d \\- %s\n%s" % (n, n, rng.choice(vocab), paras),
                  nobody.pw_uid, nobody.pw_gid)
    # miller: rows of a key, a group and two numbers
    rows = ["key,group,a,b\n"]
    rows.extend("%s%d,%s,%d,%.3f\n" % (rng.choice(vocab), i, rng.choice(vocab[:50]),
                                      rng.randint(0, 99999), rng.random() * 1000)
                for i in range(MLR_ROWS68))
    write("data.csv", "".join(rows), nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev, out=True)


RE2C_KEYWORDS68 = 4000
MAN_DIRS68 = 12
MLR_ROWS68 = 65000


def set69(nobody):
    dev, rng, vocab, block = journaled_begin(20261269, ("out", "calc.dc", "deep", "crlf"))
    # dc: 2 to the power of many bits, its digits summed by repeated division
    write("calc.dc", "2 %d ^ sa 0 sb [la 10 ~ lb + sb sa la 0 <x]sx lxx lb p\n" % DC_BITS69,
          nobody.pw_uid, nobody.pw_gid)
    # fdfind: directories four deep, each leaf with files named from the vocabulary
    for a in range(FD_FANOUT69):
        for b in range(FD_FANOUT69):
            for c in range(FD_FANOUT69):
                d = os.path.join("deep", "a%d" % a, "b%d" % b, "c%d" % c)
                os.makedirs(os.path.join(DIR, d), exist_ok=True)
                for f in range(FD_FILES69):
                    write(os.path.join(d, "%s%d.txt" % (rng.choice(vocab), f)), "%d\n" % f,
                          nobody.pw_uid, nobody.pw_gid)
    # dos2unix: text files with CRLF line ends, kept pristine in crlf/ and copied into out/
    os.makedirs(os.path.join(DIR, "crlf"), exist_ok=True)
    for f in range(CRLF_FILES69):
        text = "".join("%d %s\r\n" % (f, block[(f * 97 + i) % len(block)]) for i in range(200))
        write(os.path.join("crlf", "t%04d.txt" % f), text, nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev, out=True)


DC_BITS69 = 28000
FD_FANOUT69 = 14
FD_FILES69 = 40
CRLF_FILES69 = 2400


def set70(nobody):
    dev, rng, vocab, block = journaled_begin(20261270, ("out", "plain.txt", "key.txt", "img.ppm",
                                                        "img.png", "lines.txt"))
    write("plain.txt", numbered(block, CCRYPT_LINES70), nobody.pw_uid, nobody.pw_gid)
    write("key.txt", rng.choice(vocab) + "\n", nobody.pw_uid, nobody.pw_gid)
    # avifenc: gradients with noise, as a PNG
    n = AVIF_SIDE70
    noise = rng.randbytes(n * n)
    pix = bytearray(3 * n * n)
    for y in range(n):
        for x in range(n):
            i = y * n + x
            pix[3 * i] = (x * 255 // n + noise[i] % 32) & 255
            pix[3 * i + 1] = (y * 255 // n) & 255
            pix[3 * i + 2] = ((x ^ y) + noise[i] % 16) & 255
    write("img.ppm", b"P6 %d %d 255\n" % (n, n) + bytes(pix), nobody.pw_uid, nobody.pw_gid)
    with open(os.path.join(DIR, "img.png"), "wb") as f:
        subprocess.run(["pnmtopng", os.path.join(DIR, "img.ppm")], stdout=f, check=True)
    os.chown(os.path.join(DIR, "img.png"), nobody.pw_uid, nobody.pw_gid)
    write("lines.txt", "".join("%d %s\n" % (i, block[i % len(block)][:120])
                               for i in range(QR_LINES70)), nobody.pw_uid, nobody.pw_gid)
    journaled_end(nobody, dev, out=True)


CCRYPT_LINES70 = 700000
AVIF_SIDE70 = 1024
QR_LINES70 = 140


def main():
    global DIR
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", type=int, choices=sorted(DIRS), default=1)
    ap.add_argument("--release", action="store_true",
                    help="sets 10 to 12 and 14 to 70: unmount the file system and free its loop device")
    a = ap.parse_args()
    DIR = DIRS[a.set]
    if a.release:
        if a.set not in JOURNALED:
            raise SystemExit("prepare: --release is for sets %s"
                             % ", ".join(str(n) for n in JOURNALED))
        journaled_release()
        return
    nobody = pwd.getpwnam("nobody")
    os.makedirs(DIR, exist_ok=True)
    os.chown(DIR, nobody.pw_uid, nobody.pw_gid)
    os.chmod(DIR, 0o755)
    sets = {2: set2, 3: set3, 4: set4, 5: set5, 6: set6, 7: set7, 10: set10, 11: set11,
            12: set12, 13: set13, 14: set14, 15: set15, 16: set16, 17: set17,
            18: set18, 19: set19, 20: set20, 21: set21, 22: set22, 23: set23,
            24: set24, 25: set25, 26: set26, 27: set27, 28: set28, 29: set29,
            30: set30, 31: set31, 32: set32, 33: set33, 34: set34, 35: set35, 36: set36, 37: set37, 38: set38, 39: set39,
            40: set40, 41: set41, 42: set42, 43: set43, 44: set44,
            45: set45, 46: set46, 47: set47, 48: set48, 49: set49, 50: set50,
            51: set51, 52: set52, 53: set53, 54: set54, 55: set55, 56: set56,
            57: set57, 58: set58, 59: set59, 60: set60, 61: set61, 62: set62, 63: set63, 64: set64, 65: set65, 66: set66, 67: set67, 68: set68, 69: set69, 70: set70}
    if a.set in sets:
        sets[a.set](nobody)
        print("prepared %s" % DIR)
        return
    rng = random.Random(20261202)
    vocab = vocabulary(rng)
    # 2.5 MB of words, repeated with a running line number: farther apart than
    # gzip's window and xz -1's dictionary, so each copy is compressed anew
    block = [words(rng, vocab, 12) for _ in range(32000)]
    write("text.dat", numbered(block, 10 * len(block)), nobody.pw_uid, nobody.pw_gid)
    write("text2.dat", numbered(block, 3 * len(block)), nobody.pw_uid, nobody.pw_gid)
    sql = ["PRAGMA journal_mode=DELETE;", "PRAGMA synchronous=FULL;",
           "DROP TABLE IF EXISTS t;", "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"]
    sql += ["INSERT INTO t(v) VALUES ('%s');" % words(rng, vocab, 20) for _ in range(150)]
    sql += ["SELECT count(*) FROM t;"]
    write("txn.sql", "\n".join(sql) + "\n", nobody.pw_uid, nobody.pw_gid)
    fns = []
    for i in range(900):
        fns.append("int f%d(int x)\n{\n\tint s = 0;\n\tfor (int i = 0; i < x; i++)\n"
                   "\t\ts += (i * %d) ^ (s >> 3);\n\treturn s + %d;\n}\n" % (i, rng.randint(3, 97), i))
    fns.append("int main(void)\n{\n\treturn f0(3) & 1;\n}\n")
    write("gen.c", "\n".join(fns), nobody.pw_uid, nobody.pw_gid)
    print("prepared %s" % DIR)


if __name__ == "__main__":
    main()
