"""The everyday programs that only read, each with the options it accepts (GNU coreutils,
util-linux, grep, ripgrep, jq... as their ``--help`` lists them) and the ones that would
make it write a file or run a program.

A program is read-only here only if every option on its command line is in its spec and
none is dangerous; operands are checked where they can change something (``uniq IN OUT``,
``date 0101...``). Interactive and shell-escaping programs (less, more, man, vi) are not
listed: they are never read-only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agent.shell.options import Arg, OptionSpec, Parsed, parse, spec

Check = Callable[[Sequence[Arg]], bool]

_CHECKSUM = spec(
    "bctzwl:",
    "binary check tag text zero ignore-missing quiet status strict warn length= help version",
)
_GREP = spec(
    "EFGPe:f:iywxUzsvVm:bnHhoqaId:D:rRLlcTZA:B:C:",
    "extended-regexp fixed-strings basic-regexp perl-regexp regexp= file= ignore-case "
    "no-ignore-case word-regexp line-regexp null-data no-messages invert-match version help "
    "max-count= byte-offset line-number no-line-number line-buffered with-filename no-filename "
    "label= only-matching quiet silent binary-files= text directories= devices= recursive "
    "dereference-recursive include= exclude= exclude-from= exclude-dir= files-without-match "
    "files-with-matches count initial-tab null before-context= after-context= context= "
    "group-separator= no-group-separator color=? colour=? binary",
    numbers=True,
)

SPECS: dict[str, OptionSpec] = {
    "ls": spec(
        "aAbBcCdDfFgGhHiI:klLmnNopqQrRsStT:uUvw:xXZ1",
        "all almost-all author escape block-size= ignore-backups color=? directory dired "
        "classify=? file-type format= full-time group-directories-first no-group "
        "human-readable si dereference-command-line dereference-command-line-symlink-to-dir "
        "hide= hyperlink=? indicator-style= inode ignore= kibibytes dereference "
        "numeric-uid-gid literal hide-control-chars show-control-chars quote-name "
        "quoting-style= reverse recursive size sort= time= time-style= tabsize= width= "
        "context zero help version",
    ),
    "cat": spec(
        "AbeEnstTuv",
        "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting "
        "help version",
    ),
    "head": spec(
        "c:n:qvz", "bytes= lines= quiet silent verbose zero-terminated help version", numbers=True
    ),
    "tail": spec(
        "c:fFn:qs:vz",
        "bytes= follow=? lines= max-unchanged-stats= pid= quiet silent retry sleep-interval= "
        "verbose zero-terminated help version",
        numbers=True,
    ),
    "wc": spec(
        "cmlLw",
        "bytes chars lines files0-from= max-line-length words total= help version",
    ),
    "sort": spec(
        "bcCdfghiMmnrRsuVzk:o:S:t:T:",
        "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort "
        "ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort "
        "random-source= reverse sort= version-sort batch-size= check=? compress-program= "
        "debug files0-from= key= merge output= stable buffer-size= field-separator= "
        "temporary-directory= parallel= unique zero-terminated help version",
        dangerous="-o --output --compress-program",
    ),
    "uniq": spec(
        "cdDf:is:uzw:",
        "count repeated all-repeated=? skip-fields= group=? ignore-case skip-chars= unique "
        "zero-terminated check-chars= help version",
        numbers=True,
        max_operands=1,  # uniq IN OUT writes OUT
    ),
    "cut": spec(
        "b:c:d:f:nsz",
        "bytes= characters= delimiter= fields= complement only-delimited output-delimiter= "
        "zero-terminated help version",
    ),
    "tr": spec(
        "cCdst", "complement delete squeeze-repeats truncate-set1 help version", max_operands=2
    ),
    "nl": spec(
        "b:d:f:h:i:l:n:ps:v:w:",
        "body-numbering= section-delimiter= footer-numbering= header-numbering= "
        "line-increment= join-blank-lines= number-format= no-renumber number-separator= "
        "starting-line-number= number-width= help version",
    ),
    "od": spec(
        "A:j:N:S:t:vw::abcdfilosxDeFHILOX",
        "address-radix= endian= skip-bytes= read-bytes= strings=? format= output-duplicates "
        "width=? traditional help version",
    ),
    "hexdump": spec(
        "bcCdoxe:f:n:s:vL::",
        "one-byte-octal one-byte-char canonical two-bytes-decimal two-bytes-octal "
        "two-bytes-hex format= format-file= length= skip= no-squeezing color=? help version",
    ),
    "xxd": spec("aAbCc:Eeg:hil:n:o:prdR:s:uv", max_operands=1),  # xxd IN OUT writes OUT
    "basename": spec("as:z", "multiple suffix= zero help version"),
    "dirname": spec("z", "zero help version"),
    "realpath": spec(
        "eLmPqsz",
        "canonicalize-existing canonicalize-missing logical physical quiet relative-to= "
        "relative-base= strip no-symlinks zero help version",
    ),
    "readlink": spec(
        "efmnqsvz",
        "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent "
        "verbose zero help version",
    ),
    "diff": spec(
        "abBcC:dD:eEfF:hHiI:lL:nNpqrsS:tTuU:vwW:x:X:yZ",
        "normal brief report-identical-files context=? unified=? ed rcs side-by-side width= "
        "left-column suppress-common-lines show-c-function show-function-line= label= "
        "expand-tabs initial-tab tabsize= suppress-blank-empty paginate recursive "
        "no-dereference new-file unidirectional-new-file ignore-file-name-case "
        "no-ignore-file-name-case exclude= exclude-from= starting-file= from-file= to-file= "
        "ignore-case ignore-tab-expansion ignore-trailing-space ignore-space-change "
        "ignore-all-space ignore-blank-lines ignore-matching-lines= text strip-trailing-cr "
        "ifdef= old-group-format= new-group-format= changed-group-format= "
        "unchanged-group-format= line-format= old-line-format= new-line-format= "
        "unchanged-line-format= minimal horizon-lines= speed-large-files color=? palette= "
        "help version",
        dangerous="-l --paginate",  # runs pr
        numbers=True,
    ),
    "cmp": spec("bi:ln:sv", "print-bytes ignore-initial= verbose bytes= quiet silent help version"),
    "comm": spec(
        "123z", "check-order nocheck-order output-delimiter= total zero-terminated help version"
    ),
    "column": spec(
        "c:C:dehi:JlLn:N:o:O:p:r:R:s:tT:W:xE:H:V",
        "columns= table table-name= table-order= table-columns= table-column= "
        "table-columns-limit= table-noextreme= table-noheadings table-header-as-columns "
        "table-header-repeat table-hide= table-right= table-truncate= table-wrap= "
        "keep-empty-lines json tree= tree-id= tree-parent= output-width= output-separator= "
        "separator= fillrows use-spaces= help version",
    ),
    "jq": spec(
        "cnesrRjaSCMhVL:f:0",
        "seq stream stream-errors slurp raw-input null-input compact-output tab indent= "
        "color-output monochrome-output ascii-output unbuffered sort-keys raw-output "
        "raw-output0 join-output nul-output exit-status arg=2 argjson=2 slurpfile=2 rawfile=2 "
        "argfile=2 args jsonargs from-file= library-path= version build-configuration help",
    ),
    "md5sum": _CHECKSUM,
    "sha1sum": _CHECKSUM,
    "sha224sum": _CHECKSUM,
    "sha256sum": _CHECKSUM,
    "sha384sum": _CHECKSUM,
    "sha512sum": _CHECKSUM,
    "b2sum": _CHECKSUM,
    "cksum": spec(
        "a:l:", "algorithm= base64 check length= raw tag untagged zero debug help version"
    ),
    "sum": spec("rs", "sysv help version"),
    "id": spec("agGnruzZ", "context group groups name real user zero help version"),
    "whoami": spec("", "help version", max_operands=0),
    "groups": spec("", "help version"),
    "logname": spec("", "help version", max_operands=0),
    "tty": spec("s", "silent quiet help version", max_operands=0),
    "arch": spec("", "help version", max_operands=0),
    "nproc": spec("", "all ignore= help version", max_operands=0),
    "uname": spec(
        "asnrvmpio",
        "all kernel-name nodename kernel-release kernel-version machine processor "
        "hardware-platform operating-system help version",
        max_operands=0,
    ),
    "hostname": spec(
        "aAbdF:fhiIsvVy",
        "alias all-fqdns boot domain file= fqdn long ip-address all-ip-addresses short "
        "verbose version help yp nis",
        dangerous="-b --boot -F --file",
        max_operands=0,  # hostname NAME sets it
    ),
    "printenv": spec("0", "null help version"),
    "seq": spec("f:s:w", "format= separator= equal-width help version", numbers=True),
    "stat": spec("Lfc:t", "dereference file-system cached= format= printf= terse help version"),
    "du": spec(
        "0aB:bcd:DhHklLmPsSt:xX:",
        "null all apparent-size block-size= bytes total dereference-args max-depth= summarize "
        "files0-from= human-readable inodes dereference count-links no-dereference "
        "separate-dirs si threshold= time=? time-style= exclude-from= exclude= "
        "one-file-system help version",
    ),
    "df": spec(
        "aB:hHiklPt:Tx:v",
        "all block-size= human-readable si inodes local no-sync output=? portability sync "
        "total type= print-type exclude-type= help version",
    ),
    "tac": spec("bs:r", "before regex separator= help version"),
    "rev": spec("0", "zero help version"),
    "paste": spec("d:sz", "delimiters= serial zero-terminated help version"),
    "fold": spec("bsw:", "bytes spaces width= help version", numbers=True),
    "expand": spec("it:", "initial tabs= help version", numbers=True),
    "unexpand": spec("at:", "all first-only tabs= help version", numbers=True),
    "fmt": spec(
        "cp:stuw:g:",
        "crown-margin prefix= split-only tagged-paragraph uniform-spacing width= goal= "
        "help version",
        numbers=True,
    ),
    "numfmt": spec(
        "d:z",
        "debug delimiter= field= format= from= from-unit= grouping header=? invalid= padding= "
        "round= suffix= to= to-unit= zero-terminated help version",
    ),
    "base64": spec("diw:", "decode ignore-garbage wrap= help version"),
    "base32": spec("diw:", "decode ignore-garbage wrap= help version"),
    "strings": spec(
        "adfn:t:oe:T:wsU:hv",
        "all data print-file-name bytes= radix= encoding= target= include-all-whitespace "
        "output-separator= unicode= help version",
        numbers=True,
    ),
    "tsort": spec("", "help version"),
    "pr": spec(
        "aC:cdD:e::Ffh:i::Jl:mn::N:o:rs::S::tTvw:W:",
        "columns= across show-control-chars double-space date-format= expand-tabs=? "
        "form-feed header= output-tabs=? join-lines length= merge number-lines=? "
        "first-line-number= indent= no-file-warnings separator=? sep-string=? omit-header "
        "omit-pagination show-nonprinting width= page-width= help version",
    ),
    "free": spec(
        "bkmghltvs:c:wV",
        "bytes kilo mega giga tera peta kibi mebi gibi tebi pebi human si lohi total "
        "committed seconds= count= wide help version",
    ),
    "uptime": spec("phsV", "pretty help since version", max_operands=0),
    "locale": spec(
        "amckvV", "all-locales charmaps category-name keyword-name verbose help usage version"
    ),
    "sleep": spec("", "help version"),
    "pwd": spec("LP", max_operands=0),
    "cd": spec("LPe@", max_operands=1),
    "pushd": spec("n", max_operands=1),
    "popd": spec("n", max_operands=1),
    "dirs": spec("clpv"),
    "which": spec("as"),
    "type": spec("afptP"),
    "printf": spec("v:", dangerous="-v", permute=False),  # -v 'a[$(cmd)]' runs cmd
    "expr": spec(permute=False),
    "file": spec(
        "bcCde:E:f:F:hiklLm:nNpP:rsSvz0Z",
        "brief checking-printout compile debug exclude= exclude-quiet= files-from= separator= "
        "no-dereference mime keep-going list dereference magic-file= no-buffer no-pad "
        "preserve-date parameter= raw special-files no-sandbox uncompress "
        "uncompress-noreport mime-type mime-encoding apple extension print0 help version",
        dangerous="-C --compile -z -Z --uncompress --uncompress-noreport",  # -z runs gzip...
    ),
    "tree": spec(
        "adlfxL:RP:I:qNQpugshDFvtcUrCAiSnXJH:T:o:",
        "gitignore gitfile= ignore-case matchdirs metafirst prune info infofile= noreport "
        "charset= filelimit= si du timefmt= inodes device dirsfirst filesfirst sort= nolinks "
        "hintro= houtro= hyperlink scheme= authority= fromfile fromtabfile fflinks help "
        "version",
        dangerous="-o -R",  # -o FILE; -R rewrites 00Tree.html in every directory
    ),
    "rg": spec(
        "A:B:C:e:E:f:g:j:m:M:r:t:T:d:abcFhHiIlLnNopqsSuUvVwxz0",
        "after-context= before-context= context= context-separator= no-context-separator "
        "count count-matches color= colors= column no-column byte-offset crlf no-crlf debug "
        "trace dfa-size-limit= encoding= engine= file= field-context-separator= "
        "field-match-separator= files files-with-matches files-without-match fixed-strings "
        "no-fixed-strings follow no-follow generate= glob= glob-case-insensitive "
        "no-glob-case-insensitive iglob= help heading no-heading with-filename no-filename "
        "hidden no-hidden hostname-bin= hyperlink-format= ignore-case ignore-file= "
        "ignore-file-case-insensitive no-ignore-file-case-insensitive include-zero "
        "no-include-zero invert-match no-invert-match json no-json line-buffered "
        "no-line-buffered block-buffered no-block-buffered line-number no-line-number "
        "line-regexp max-columns= max-columns-preview no-max-columns-preview max-count= "
        "max-depth= maxdepth= max-filesize= mmap no-mmap multiline no-multiline "
        "multiline-dotall no-multiline-dotall no-config no-ignore ignore no-ignore-dot "
        "ignore-dot no-ignore-exclude ignore-exclude no-ignore-files ignore-files "
        "no-ignore-global ignore-global no-ignore-messages ignore-messages no-ignore-parent "
        "ignore-parent no-ignore-vcs ignore-vcs no-messages messages no-pcre2-unicode "
        "pcre2-unicode no-require-git require-git no-unicode unicode null null-data "
        "one-file-system no-one-file-system only-matching passthru passthrough "
        "path-separator= pcre2 no-pcre2 pcre2-version pre= no-pre pre-glob= pretty quiet "
        "regex-size-limit= regexp= replace= search-zip no-search-zip smart-case "
        "no-smart-case case-sensitive sort= sort-files no-sort-files sortr= stats no-stats "
        "stop-on-nonmatch text no-text threads= trim no-trim type= type-add= type-clear= "
        "type-list type-not= unrestricted version vimgrep word-regexp auto-hybrid-regex "
        "no-auto-hybrid-regex binary no-binary",
        dangerous="--pre --pre-glob -z --search-zip --hostname-bin",  # they run programs
    ),
    "grep": _GREP,
    "egrep": _GREP,
    "fgrep": _GREP,
}


def by_spec(option_spec: OptionSpec, operands: Callable[[Parsed], bool] | None = None) -> Check:
    """A check that reads the arguments with ``option_spec``."""

    def check(args: Sequence[Arg]) -> bool:
        return accepts(option_spec, args, operands)

    return check


def accepts(
    option_spec: OptionSpec,
    args: Sequence[Arg],
    operands: Callable[[Parsed], bool] | None = None,
) -> bool:
    """Every option known, none dangerous, the operands harmless; a word the text does not
    fix only where nothing it could turn into changes anything."""
    parsed = parse(option_spec, args)
    if parsed is None or parsed.dangerous:
        return False
    restricted = operands is not None or option_spec.max_operands is not None
    if parsed.unknown_in_options and (option_spec.dangerous or restricted):
        return False
    if parsed.unknown_operands and restricted:
        return False
    return operands is None or operands(parsed)


CHECKS: dict[str, Check] = {name: by_spec(s) for name, s in SPECS.items()}
