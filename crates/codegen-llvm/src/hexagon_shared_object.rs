//! Ferrohalide's own static linker for Hexagon: it turns one relocatable
//! ELF32 Hexagon object, as LLVM emits it with `RelocMode::PIC`, into a
//! shared object (ET_DYN) that a Hexagon dynamic loader (QuRT's
//! `dlopenbuf`, or a test loader) can load. Halide offloads Hexagon
//! pipelines the same way (HexagonOffload.cpp, Elf.cpp). It exists because
//! users install a wheel and nothing else: there is no `ld.lld` or Hexagon
//! SDK linker to run.
//!
//! Assumes: a little-endian ELF32 `EM_HEXAGON` relocatable object whose
//! code is position independent the way LLVM makes it: data is reached
//! with `Rd = add(pc, ##x@PCREL)` against symbols defined in the object,
//! other functions with PC-relative branches, pointers in data are
//! `R_HEX_32` words. There is no TLS, no GOT-based reference (a global that
//! is not `dso_local`), no common symbol, at most one constructor section
//! (`.init_array`, or `.ctors` with one entry: LLVM's choice for
//! `hexagon-unknown-none-elf`) and one destructor section, and no section
//! aligned to more than a page.
//!
//! Guarantees: the result, or an `Error::internal` naming what is not
//! handled (a relocation with its section and offset, a section, a
//! symbol); malformed input is an error, never a panic. The result has:
//! - a read+execute PT_LOAD holding the ELF and program headers, `.plt`,
//!   the code and the read-only data; a read+write PT_LOAD holding the
//!   writable data (NOBITS sections as zero-filled PROGBITS), read-only
//!   data that holds pointers, `.got` and the dynamic tables; a
//!   PT_DYNAMIC. Virtual addresses equal file offsets, segments start on a
//!   page, every section keeps its alignment; non-alloc input sections
//!   (notes, attributes, debug information) are dropped.
//! - `.dynsym` exporting every defined global or weak symbol of default or
//!   protected visibility, and importing each undefined symbol a relocation
//!   uses (`.hash` is a SysV hash table of it).
//! - references to symbols the object defines resolved at link time
//!   (DT_SYMBOLIC: another module cannot override even a weak one); calls
//!   to undefined functions made through one 16-byte PLT entry per
//!   function, whose GOT slot the loader fills from an `R_HEX_JMP_SLOT`
//!   relocation before the code runs (DF_BIND_NOW: there is no lazy
//!   resolver); pointers in data fixed by `R_HEX_RELATIVE` (or `R_HEX_32`
//!   for an imported symbol).
//! - section headers, `.symtab` included, so llvm-readelf and llvm-objdump
//!   can inspect it.

use std::collections::HashMap;
use std::fmt::Display;

use ferrohalide_core::{Error, Result};

const PAGE: u32 = 0x1000;
const ELF_HEADER_SIZE: u32 = 52;
const PROGRAM_HEADER_SIZE: u32 = 32;
const PROGRAM_HEADERS: u32 = 3;
const SECTION_HEADER_SIZE: u32 = 40;
const SYMBOL_SIZE: u32 = 16;
const RELA_SIZE: u32 = 12;
const PLT_ENTRY_SIZE: u32 = 16;
/// GOT words before the PLT slots: the first holds `_DYNAMIC`, the others
/// are the ones loaders reserve for a lazy resolver (unused here, but a
/// loader may write them).
const GOT_RESERVED: u32 = 4;

const ET_REL: u16 = 1;
const ET_DYN: u16 = 3;
const EM_HEXAGON: u16 = 164;

const SHT_NULL: u32 = 0;
const SHT_PROGBITS: u32 = 1;
const SHT_SYMTAB: u32 = 2;
const SHT_STRTAB: u32 = 3;
const SHT_RELA: u32 = 4;
const SHT_HASH: u32 = 5;
const SHT_DYNAMIC: u32 = 6;
const SHT_NOBITS: u32 = 8;
const SHT_REL: u32 = 9;
const SHT_DYNSYM: u32 = 11;
const SHT_INIT_ARRAY: u32 = 14;
const SHT_FINI_ARRAY: u32 = 15;
const SHT_PREINIT_ARRAY: u32 = 16;

const SHF_WRITE: u32 = 0x1;
const SHF_ALLOC: u32 = 0x2;
const SHF_EXECINSTR: u32 = 0x4;
const SHF_MERGE: u32 = 0x10;
const SHF_STRINGS: u32 = 0x20;
const SHF_INFO_LINK: u32 = 0x40;
const SHF_TLS: u32 = 0x400;

const SHN_UNDEF: u16 = 0;
const SHN_LORESERVE: u16 = 0xff00;
const SHN_ABS: u16 = 0xfff1;

const STB_LOCAL: u8 = 0;
const STB_GLOBAL: u8 = 1;
const STB_WEAK: u8 = 2;
const STT_SECTION: u8 = 3;
const STT_FILE: u8 = 4;
const STV_DEFAULT: u8 = 0;
const STV_PROTECTED: u8 = 3;

const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PF_X: u32 = 1;
const PF_W: u32 = 2;
const PF_R: u32 = 4;

const DT_NULL: u32 = 0;
const DT_NEEDED: u32 = 1;
const DT_PLTRELSZ: u32 = 2;
const DT_PLTGOT: u32 = 3;
const DT_HASH: u32 = 4;
const DT_STRTAB: u32 = 5;
const DT_SYMTAB: u32 = 6;
const DT_RELA: u32 = 7;
const DT_RELASZ: u32 = 8;
const DT_RELAENT: u32 = 9;
const DT_STRSZ: u32 = 10;
const DT_SYMENT: u32 = 11;
const DT_SONAME: u32 = 14;
const DT_SYMBOLIC: u32 = 16;
const DT_PLTREL: u32 = 20;
const DT_JMPREL: u32 = 23;
const DT_INIT_ARRAY: u32 = 25;
const DT_FINI_ARRAY: u32 = 26;
const DT_INIT_ARRAYSZ: u32 = 27;
const DT_FINI_ARRAYSZ: u32 = 28;
const DT_FLAGS: u32 = 30;
const DT_FLAGS_1: u32 = 0x6fff_fffb;
/// The Hexagon ABI version the loader expects; Halide writes 3.
const DT_HEXAGON_VER: u32 = 0x7000_0001;
const DF_SYMBOLIC: u32 = 0x2;
const DF_BIND_NOW: u32 = 0x8;
const DF_1_NOW: u32 = 0x1;

const R_HEX_NONE: u32 = 0;
const R_HEX_B22_PCREL: u32 = 1;
const R_HEX_B15_PCREL: u32 = 2;
const R_HEX_B7_PCREL: u32 = 3;
const R_HEX_32: u32 = 6;
const R_HEX_B13_PCREL: u32 = 14;
const R_HEX_B9_PCREL: u32 = 15;
const R_HEX_B32_PCREL_X: u32 = 16;
const R_HEX_B22_PCREL_X: u32 = 18;
const R_HEX_B15_PCREL_X: u32 = 19;
const R_HEX_B13_PCREL_X: u32 = 20;
const R_HEX_B9_PCREL_X: u32 = 21;
const R_HEX_B7_PCREL_X: u32 = 22;
const R_HEX_32_PCREL: u32 = 31;
const R_HEX_JMP_SLOT: u32 = 34;
const R_HEX_RELATIVE: u32 = 35;
const R_HEX_PLT_B22_PCREL: u32 = 36;
const R_HEX_6_PCREL_X: u32 = 65;

/// Names of the Hexagon relocation types, by number (LLVM's Hexagon.def),
/// for error messages.
#[rustfmt::skip]
const RELOCATION_NAMES: [&str; 100] = [
    "R_HEX_NONE", "R_HEX_B22_PCREL", "R_HEX_B15_PCREL", "R_HEX_B7_PCREL", "R_HEX_LO16",
    "R_HEX_HI16", "R_HEX_32", "R_HEX_16", "R_HEX_8", "R_HEX_GPREL16_0",
    "R_HEX_GPREL16_1", "R_HEX_GPREL16_2", "R_HEX_GPREL16_3", "R_HEX_HL16", "R_HEX_B13_PCREL",
    "R_HEX_B9_PCREL", "R_HEX_B32_PCREL_X", "R_HEX_32_6_X", "R_HEX_B22_PCREL_X", "R_HEX_B15_PCREL_X",
    "R_HEX_B13_PCREL_X", "R_HEX_B9_PCREL_X", "R_HEX_B7_PCREL_X", "R_HEX_16_X", "R_HEX_12_X",
    "R_HEX_11_X", "R_HEX_10_X", "R_HEX_9_X", "R_HEX_8_X", "R_HEX_7_X",
    "R_HEX_6_X", "R_HEX_32_PCREL", "R_HEX_COPY", "R_HEX_GLOB_DAT", "R_HEX_JMP_SLOT",
    "R_HEX_RELATIVE", "R_HEX_PLT_B22_PCREL", "R_HEX_GOTREL_LO16", "R_HEX_GOTREL_HI16", "R_HEX_GOTREL_32",
    "R_HEX_GOT_LO16", "R_HEX_GOT_HI16", "R_HEX_GOT_32", "R_HEX_GOT_16", "R_HEX_DTPMOD_32",
    "R_HEX_DTPREL_LO16", "R_HEX_DTPREL_HI16", "R_HEX_DTPREL_32", "R_HEX_DTPREL_16", "R_HEX_GD_PLT_B22_PCREL",
    "R_HEX_GD_GOT_LO16", "R_HEX_GD_GOT_HI16", "R_HEX_GD_GOT_32", "R_HEX_GD_GOT_16", "R_HEX_IE_LO16",
    "R_HEX_IE_HI16", "R_HEX_IE_32", "R_HEX_IE_GOT_LO16", "R_HEX_IE_GOT_HI16", "R_HEX_IE_GOT_32",
    "R_HEX_IE_GOT_16", "R_HEX_TPREL_LO16", "R_HEX_TPREL_HI16", "R_HEX_TPREL_32", "R_HEX_TPREL_16",
    "R_HEX_6_PCREL_X", "R_HEX_GOTREL_32_6_X", "R_HEX_GOTREL_16_X", "R_HEX_GOTREL_11_X", "R_HEX_GOT_32_6_X",
    "R_HEX_GOT_16_X", "R_HEX_GOT_11_X", "R_HEX_DTPREL_32_6_X", "R_HEX_DTPREL_16_X", "R_HEX_DTPREL_11_X",
    "R_HEX_GD_GOT_32_6_X", "R_HEX_GD_GOT_16_X", "R_HEX_GD_GOT_11_X", "R_HEX_IE_32_6_X", "R_HEX_IE_16_X",
    "R_HEX_IE_GOT_32_6_X", "R_HEX_IE_GOT_16_X", "R_HEX_IE_GOT_11_X", "R_HEX_TPREL_32_6_X", "R_HEX_TPREL_16_X",
    "R_HEX_TPREL_11_X", "R_HEX_LD_PLT_B22_PCREL", "R_HEX_LD_GOT_LO16", "R_HEX_LD_GOT_HI16", "R_HEX_LD_GOT_32",
    "R_HEX_LD_GOT_16", "R_HEX_LD_GOT_32_6_X", "R_HEX_LD_GOT_16_X", "R_HEX_LD_GOT_11_X", "R_HEX_23_REG",
    "R_HEX_GD_PLT_B22_PCREL_X", "R_HEX_GD_PLT_B32_PCREL_X", "R_HEX_LD_PLT_B22_PCREL_X", "R_HEX_LD_PLT_B32_PCREL_X",
    "R_HEX_27_REG",
];

// Where each relocation's bits go in the instruction word (the Hexagon
// ABI's Word32_* masks; checked against llvm-mc encodings and ld.lld).
const B22_MASK: u32 = 0x01ff_3ffe;
const B15_MASK: u32 = 0x00df_20fe;
const B13_MASK: u32 = 0x0020_2ffe;
const B9_MASK: u32 = 0x0030_00fe;
const B7_MASK: u32 = 0x0000_1f18;
/// The 26 payload bits of a constant extender (`immext`).
const EXTENDER_MASK: u32 = 0x0fff_3fff;
/// The `#u6` of `Rd = add(pc, #u6)`.
const ADD_PC_MASK: u32 = 0x0000_1f80;
/// `Rd = add(pc, #u6)` is the only instruction LLVM puts under
/// R_HEX_6_PCREL_X; its top half-word, whatever Rd and u6.
const ADD_PC_OPCODE: u32 = 0x6a49;

/// `{ immext(#..); r14 = add(pc, ##slot@PCREL) }` (before the offset is
/// scattered in), `{ r28 = memw(r14+#0) }`, `{ jumpr r28 }`: llvm-mc-19.
const PLT_IMMEXT: u32 = 0x0000_4000;
const PLT_ADD_PC: u32 = 0x6a49_c00e;
const PLT_LOAD: u32 = 0x918e_c01c;
const PLT_JUMP: u32 = 0x529c_c000;

fn error(message: impl Display) -> Error {
    Error::internal(format!("Hexagon shared object: {message}"))
}

/// Link `object` (a relocatable ELF32 Hexagon object) into a shared object named `soname`
/// that depends on `needed` (DT_NEEDED entries, in order).
pub fn link_shared_object(object: &[u8], soname: &str, needed: &[&str]) -> Result<Vec<u8>> {
    let obj = parse_object(object)?;
    let places = placements(&obj)?;
    let imports = scan_relocations(&obj, &places)?;
    let dynsyms = dynamic_symbols(&obj, &places, &imports);
    let strings = DynamicStrings::new(&obj, &dynsyms, soname, needed);
    let mut out = Output::new();
    let layout = lay_out(&mut out, &obj, &places, &imports, &dynsyms, &strings)?;
    let mut relocs = apply_relocations(&mut out, &obj, &layout, &imports)?;
    if relocs.len() != imports.dynamic_words {
        return Err(error("counted and applied dynamic relocations differ"));
    }
    // Relative relocations first, the order other linkers use.
    relocs.sort_by_key(|r| r.kind != R_HEX_RELATIVE);
    write_relocations(&mut out, layout.rela_dyn, &relocs)?;
    let jump_slots = write_plt(&mut out, &layout, &imports)?;
    write_relocations(&mut out, layout.rela_plt, &jump_slots)?;
    write_dynsym(&mut out, &obj, &layout, &dynsyms, &strings.symbols)?;
    write_symtab(&mut out, &obj, &layout, &imports)?;
    finish(out, obj.flags, &layout)
}

// ---------------------------------------------------------------------
// Reading the object.

/// Bounds-checked little-endian reads.
#[derive(Clone, Copy)]
struct Bytes<'a>(&'a [u8]);

impl<'a> Bytes<'a> {
    fn slice(self, offset: u64, len: u64) -> Result<&'a [u8]> {
        match offset.checked_add(len) {
            Some(end) if end <= self.0.len() as u64 => Ok(&self.0[offset as usize..end as usize]),
            _ => Err(error(format!(
                "malformed object: {len} bytes at offset {offset:#x} are past its end ({:#x})",
                self.0.len()
            ))),
        }
    }

    fn u16(self, offset: u64) -> Result<u16> {
        let b = self.slice(offset, 2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(self, offset: u64) -> Result<u32> {
        let b = self.slice(offset, 4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// The NUL-terminated string at `offset` of a string table.
fn c_string(table: &[u8], offset: u32) -> Result<String> {
    let tail = table.get(offset as usize..).ok_or_else(|| {
        error(format!(
            "malformed object: string offset {offset:#x} is past its table"
        ))
    })?;
    let len = tail
        .iter()
        .position(|&c| c == 0)
        .ok_or_else(|| error("malformed object: a string table does not end with NUL"))?;
    Ok(String::from_utf8_lossy(&tail[..len]).into_owned())
}

/// The fields of the ELF header this linker reads.
struct Header {
    kind: u16,
    machine: u16,
    flags: u32,
    shoff: u32,
    shentsize: u16,
    shnum: u16,
    shstrndx: u16,
}

fn read_header(b: Bytes) -> Result<Header> {
    let ident = b.slice(0, 16)?;
    if ident[..4] != *b"\x7fELF" {
        return Err(error("the input is not an ELF file"));
    }
    if ident[4] != 1 || ident[5] != 1 {
        return Err(error("the input is not a little-endian ELF32 file"));
    }
    Ok(Header {
        kind: b.u16(16)?,
        machine: b.u16(18)?,
        shoff: b.u32(32)?,
        flags: b.u32(36)?,
        shentsize: b.u16(46)?,
        shnum: b.u16(48)?,
        shstrndx: b.u16(50)?,
    })
}

/// An input section: its header and its bytes (none for NOBITS).
struct Section<'a> {
    name: String,
    kind: u32,
    flags: u32,
    size: u32,
    link: u32,
    info: u32,
    align: u32,
    entsize: u32,
    data: &'a [u8],
}

fn read_sections<'a>(b: Bytes<'a>, h: &Header) -> Result<Vec<Section<'a>>> {
    if h.shnum == 0 || h.shentsize as u32 != SECTION_HEADER_SIZE {
        return Err(error(
            "malformed object: no section headers (or extended numbering)",
        ));
    }
    let mut name_offsets = vec![];
    let mut sections = vec![];
    for i in 0..h.shnum as u64 {
        let at = h.shoff as u64 + i * SECTION_HEADER_SIZE as u64;
        let kind = b.u32(at + 4)?;
        let size = b.u32(at + 20)?;
        let data = match kind {
            SHT_NULL | SHT_NOBITS => &[][..],
            _ => b.slice(b.u32(at + 16)? as u64, size as u64)?,
        };
        name_offsets.push(b.u32(at)?);
        sections.push(Section {
            name: String::new(),
            kind,
            flags: b.u32(at + 8)?,
            size,
            link: b.u32(at + 24)?,
            info: b.u32(at + 28)?,
            align: b.u32(at + 32)?.max(1),
            entsize: b.u32(at + 36)?,
            data,
        });
    }
    let names = section(&sections, h.shstrndx as u32)?.data;
    for (s, &offset) in sections.iter_mut().zip(&name_offsets) {
        s.name = c_string(names, offset)?;
    }
    Ok(sections)
}

fn section<'s, 'a>(sections: &'s [Section<'a>], index: u32) -> Result<&'s Section<'a>> {
    sections.get(index as usize).ok_or_else(|| {
        error(format!(
            "malformed object: section index {index} is out of range"
        ))
    })
}

/// An input symbol.
struct Symbol {
    name: String,
    value: u32,
    size: u32,
    info: u8,
    other: u8,
    shndx: u16,
}

impl Symbol {
    fn binding(&self) -> u8 {
        self.info >> 4
    }
    fn kind(&self) -> u8 {
        self.info & 0xf
    }
    fn visibility(&self) -> u8 {
        self.other & 0x3
    }
}

fn read_symbols(symtab: &Section, strtab: &[u8]) -> Result<Vec<Symbol>> {
    if symtab.entsize != SYMBOL_SIZE {
        return Err(error(format!(
            "malformed object: symbol size {}",
            symtab.entsize
        )));
    }
    symtab
        .data
        .chunks_exact(SYMBOL_SIZE as usize)
        .map(|e| {
            let b = Bytes(e);
            Ok(Symbol {
                name: c_string(strtab, b.u32(0)?)?,
                value: b.u32(4)?,
                size: b.u32(8)?,
                info: e[12],
                other: e[13],
                shndx: b.u16(14)?,
            })
        })
        .collect()
}

/// An input relocation (RELA).
struct Rela {
    offset: u32,
    sym: usize,
    kind: u32,
    addend: i32,
}

fn read_relocations(rela: &Section, symbols: usize) -> Result<Vec<Rela>> {
    if rela.entsize != RELA_SIZE {
        return Err(error(format!(
            "malformed object: relocation size {} in {}",
            rela.entsize, rela.name
        )));
    }
    rela.data
        .chunks_exact(RELA_SIZE as usize)
        .map(|e| {
            let b = Bytes(e);
            let info = b.u32(4)?;
            let sym = (info >> 8) as usize;
            if sym >= symbols {
                return Err(error(format!(
                    "malformed object: symbol index {sym} in {}",
                    rela.name
                )));
            }
            Ok(Rela {
                offset: b.u32(0)?,
                sym,
                kind: info & 0xff,
                addend: b.u32(8)? as i32,
            })
        })
        .collect()
}

/// The parts of the input object the linker uses.
struct Object<'a> {
    flags: u32,
    sections: Vec<Section<'a>>,
    symbols: Vec<Symbol>,
    /// The relocations of each loaded section, by section index.
    relocations: Vec<Vec<Rela>>,
}

fn parse_object(input: &[u8]) -> Result<Object<'_>> {
    let b = Bytes(input);
    let h = read_header(b)?;
    if h.kind != ET_REL || h.machine != EM_HEXAGON {
        return Err(error(format!(
            "the input is not a relocatable Hexagon object (e_type {}, e_machine {})",
            h.kind, h.machine
        )));
    }
    let sections = read_sections(b, &h)?;
    let symtabs: Vec<&Section> = sections.iter().filter(|s| s.kind == SHT_SYMTAB).collect();
    let symbols = match symtabs[..] {
        [] => vec![],
        [symtab] => read_symbols(symtab, section(&sections, symtab.link)?.data)?,
        _ => return Err(error("the object has more than one symbol table")),
    };
    let mut relocations: Vec<Vec<Rela>> = sections.iter().map(|_| vec![]).collect();
    for s in sections
        .iter()
        .filter(|s| s.kind == SHT_RELA || s.kind == SHT_REL)
    {
        // Relocations of debug information and other dropped sections do
        // not matter.
        if section(&sections, s.info)?.flags & SHF_ALLOC == 0 {
            continue;
        }
        if s.kind == SHT_REL {
            return Err(error(format!(
                "REL relocations ({}) are not supported",
                s.name
            )));
        }
        relocations[s.info as usize].extend(read_relocations(s, symbols.len())?);
    }
    Ok(Object {
        flags: h.flags,
        sections,
        symbols,
        relocations,
    })
}

fn relocation_name(kind: u32) -> String {
    match RELOCATION_NAMES.get(kind as usize) {
        Some(name) => name.to_string(),
        None => format!("relocation type {kind}"),
    }
}

/// "relocation R_HEX_.. at .text+0x1a0", for error messages.
fn describe(obj: &Object, section: usize, r: &Rela) -> String {
    let name = obj.sections.get(section).map_or("?", |s| s.name.as_str());
    format!(
        "relocation {} at {name}+{:#x}",
        relocation_name(r.kind),
        r.offset
    )
}

// ---------------------------------------------------------------------
// Deciding what goes where.

/// The two loaded segments.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Segment {
    /// Read and execute: code and data nobody writes.
    Text,
    /// Read and write: data the program or the loader writes.
    Data,
}

/// The segment of each input section (None: not loaded).
fn placements(obj: &Object) -> Result<Vec<Option<Segment>>> {
    for role in [DT_INIT_ARRAY, DT_FINI_ARRAY] {
        let arrays = obj
            .sections
            .iter()
            .filter(|s| s.flags & SHF_ALLOC != 0 && array_role(s.kind, &s.name) == Some(role));
        if arrays.count() > 1 {
            return Err(error(
                "several constructor or destructor sections (priorities) are not supported",
            ));
        }
    }
    obj.sections
        .iter()
        .enumerate()
        .map(|(i, s)| placement(obj, i, s))
        .collect()
}

/// The segment of input section `index`, `s`.
fn placement(obj: &Object, index: usize, s: &Section) -> Result<Option<Segment>> {
    if s.flags & SHF_ALLOC == 0 {
        return Ok(None);
    }
    if s.flags & SHF_TLS != 0 {
        return Err(error(format!(
            "section {} holds thread-local data, which is not supported",
            s.name
        )));
    }
    if s.kind == SHT_PREINIT_ARRAY {
        return Err(error(
            "a .preinit_array is not supported in a shared object",
        ));
    }
    // .ctors and .dtors run last entry first, DT_INIT_ARRAY first entry
    // first: the same only for one entry.
    let is_array = array_role(s.kind, &s.name).is_some();
    if is_array && !matches!(s.kind, SHT_INIT_ARRAY | SHT_FINI_ARRAY) && s.size > 4 {
        return Err(error(format!(
            "section {} holds more than one function, which is not supported",
            s.name
        )));
    }
    if !s.align.is_power_of_two() || s.align > PAGE {
        return Err(error(format!(
            "section {} has alignment {}, which is not supported",
            s.name, s.align
        )));
    }
    // The loader writes the words R_HEX_32 relocates, so they must be in
    // writable memory; code must stay read-only.
    let holds_pointers = obj.relocations[index].iter().any(|r| r.kind == R_HEX_32);
    if s.flags & SHF_WRITE != 0 || s.kind == SHT_NOBITS {
        Ok(Some(Segment::Data))
    } else if holds_pointers && s.flags & SHF_EXECINSTR != 0 {
        Err(error(format!(
            "section {} is code with R_HEX_32 relocations, which would need text relocations",
            s.name
        )))
    } else if holds_pointers {
        Ok(Some(Segment::Data))
    } else {
        Ok(Some(Segment::Text))
    }
}

/// How a supported relocation changes an instruction word.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Insn {
    /// A PC-relative branch: (S+A-P)>>2 into `mask`, which must fit in `bits`.
    Branch { mask: u32, bits: u32 },
    /// The low six bits of an extended branch's (S+A-P).
    BranchLow(u32),
    /// A constant extender: (S+A-P)>>6, the high 26 bits of what follows.
    Extender,
    /// The low six bits of (S+A-P) in `Rd = add(pc, #u6)`.
    AddPcLow,
}

/// How a supported relocation is computed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Form {
    Insn(Insn),
    /// A 32-bit pointer, S+A: the loader adds the load address.
    Word,
    /// A 32-bit S+A-P.
    PcrelWord,
}

/// The form of a relocation type; None for R_HEX_NONE and for the types
/// this linker does not handle.
fn form(kind: u32) -> Option<Form> {
    let branch = |mask, bits| Some(Form::Insn(Insn::Branch { mask, bits }));
    let low = |mask| Some(Form::Insn(Insn::BranchLow(mask)));
    match kind {
        R_HEX_B22_PCREL | R_HEX_PLT_B22_PCREL => branch(B22_MASK, 22),
        R_HEX_B15_PCREL => branch(B15_MASK, 15),
        R_HEX_B13_PCREL => branch(B13_MASK, 13),
        R_HEX_B9_PCREL => branch(B9_MASK, 9),
        R_HEX_B7_PCREL => branch(B7_MASK, 7),
        R_HEX_B22_PCREL_X => low(B22_MASK),
        R_HEX_B15_PCREL_X => low(B15_MASK),
        R_HEX_B13_PCREL_X => low(B13_MASK),
        R_HEX_B9_PCREL_X => low(B9_MASK),
        R_HEX_B7_PCREL_X => low(B7_MASK),
        R_HEX_B32_PCREL_X => Some(Form::Insn(Insn::Extender)),
        R_HEX_6_PCREL_X => Some(Form::Insn(Insn::AddPcLow)),
        R_HEX_32 => Some(Form::Word),
        R_HEX_32_PCREL => Some(Form::PcrelWord),
        _ => None,
    }
}

/// Whether relocation `i` of a section is (part of) a branch, so that an
/// undefined target can be reached through the PLT. An extender is part
/// of the branch it extends, the next instruction word.
fn is_branch(relocs: &[Rela], i: usize) -> bool {
    let is_branch_form = |r: &Rela| {
        matches!(
            form(r.kind),
            Some(Form::Insn(Insn::Branch { .. } | Insn::BranchLow(_)))
        )
    };
    match form(relocs[i].kind) {
        Some(Form::Insn(Insn::Extender)) => extended(relocs, i).is_some_and(is_branch_form),
        _ => is_branch_form(&relocs[i]),
    }
}

/// The relocation of the instruction that extender relocation `i` extends.
fn extended(relocs: &[Rela], i: usize) -> Option<&Rela> {
    let at = relocs[i].offset.checked_add(4)?;
    let next = relocs.get(i + 1).filter(|r| r.offset == at);
    next.or_else(|| relocs.iter().find(|r| r.offset == at))
}

/// Symbol 0 and SHN_ABS symbols: addresses that do not move with the load
/// address.
fn is_absolute(obj: &Object, sym: usize) -> bool {
    sym == 0 || obj.symbols[sym].shndx == SHN_ABS
}

fn is_undefined(obj: &Object, sym: usize) -> bool {
    sym != 0 && obj.symbols[sym].shndx == SHN_UNDEF
}

/// Input symbol indices in order of first insertion, with their positions.
#[derive(Default)]
struct Ordered {
    order: Vec<usize>,
    position: HashMap<usize, usize>,
}

impl Ordered {
    fn insert(&mut self, sym: usize) {
        if !self.position.contains_key(&sym) {
            self.position.insert(sym, self.order.len());
            self.order.push(sym);
        }
    }
}

/// What the relocations need from the dynamic loader.
#[derive(Default)]
struct Imports {
    /// The undefined symbols relocations use; `.dynsym` lists them first,
    /// after the null symbol.
    symbols: Ordered,
    /// The undefined functions that are called, one PLT entry each.
    plt: Ordered,
    /// How many R_HEX_32 words the loader relocates.
    dynamic_words: usize,
}

impl Imports {
    fn dynsym_index(&self, sym: usize) -> Result<u32> {
        match self.symbols.position.get(&sym) {
            Some(&p) => Ok(p as u32 + 1),
            None => Err(error(format!("symbol {sym} was not imported"))),
        }
    }
}

/// The relocation lists of the loaded sections, with section indices.
fn loaded_relocations<'o>(
    obj: &'o Object,
    placed: impl Fn(usize) -> bool + 'o,
) -> impl Iterator<Item = (usize, &'o [Rela])> + 'o {
    obj.relocations
        .iter()
        .enumerate()
        .filter(move |(s, _)| placed(*s))
        .map(|(s, r)| (s, &r[..]))
}

/// Check every relocation of the loaded sections, and find the imports and
/// PLT entries they need.
fn scan_relocations(obj: &Object, places: &[Option<Segment>]) -> Result<Imports> {
    let loaded = |s: usize| places[s].is_some();
    // Name an unsupported type before any symbol trouble it causes (a GOT
    // reference also refers to the undefined _GLOBAL_OFFSET_TABLE_).
    for (s, relocs) in loaded_relocations(obj, loaded) {
        if let Some(r) = relocs
            .iter()
            .find(|r| r.kind != R_HEX_NONE && form(r.kind).is_none())
        {
            return Err(error(format!("{} is not supported", describe(obj, s, r))));
        }
    }
    let mut imports = Imports::default();
    for (s, relocs) in loaded_relocations(obj, loaded) {
        for (i, r) in relocs.iter().enumerate() {
            let Some(form) = form(r.kind) else { continue };
            if form == Form::Word && !is_absolute(obj, r.sym) {
                imports.dynamic_words += 1;
            }
            if !is_undefined(obj, r.sym) {
                continue;
            }
            if is_branch(relocs, i) {
                imports.plt.insert(r.sym);
            } else if form != Form::Word {
                return Err(error(format!(
                    "{} refers to the undefined symbol `{}`, which would need a GOT entry (not supported)",
                    describe(obj, s, r),
                    obj.symbols[r.sym].name
                )));
            }
            imports.symbols.insert(r.sym);
        }
    }
    Ok(imports)
}

/// Whether a symbol is exported: defined (in a loaded section or
/// absolute), global or weak, visible outside.
fn is_export(obj: &Object, places: &[Option<Segment>], sym: usize) -> bool {
    let s = &obj.symbols[sym];
    let defined = s.shndx == SHN_ABS
        || (s.shndx != SHN_UNDEF && places.get(s.shndx as usize).is_some_and(|p| p.is_some()));
    defined
        && matches!(s.binding(), STB_GLOBAL | STB_WEAK)
        && matches!(s.visibility(), STV_DEFAULT | STV_PROTECTED)
}

/// `.dynsym` as input symbol indices: the null symbol, the imports, the
/// exports.
fn dynamic_symbols(obj: &Object, places: &[Option<Segment>], imports: &Imports) -> Vec<usize> {
    let exports = (1..obj.symbols.len()).filter(|&s| is_export(obj, places, s));
    std::iter::once(0)
        .chain(imports.symbols.order.iter().copied())
        .chain(exports)
        .collect()
}

/// A string table under construction.
struct StringTable {
    bytes: Vec<u8>,
    offsets: HashMap<String, u32>,
}

impl StringTable {
    fn new() -> StringTable {
        StringTable {
            bytes: vec![0],
            offsets: HashMap::new(),
        }
    }

    fn add(&mut self, s: &str) -> u32 {
        if s.is_empty() {
            return 0;
        }
        if let Some(&offset) = self.offsets.get(s) {
            return offset;
        }
        let offset = self.bytes.len() as u32;
        self.bytes.extend_from_slice(s.as_bytes());
        self.bytes.push(0);
        self.offsets.insert(s.to_string(), offset);
        offset
    }
}

/// `.dynstr` and the offsets in it the other tables use.
struct DynamicStrings {
    table: StringTable,
    soname: u32,
    needed: Vec<u32>,
    /// The name of each `.dynsym` entry.
    symbols: Vec<u32>,
}

impl DynamicStrings {
    fn new(obj: &Object, dynsyms: &[usize], soname: &str, needed: &[&str]) -> DynamicStrings {
        let mut table = StringTable::new();
        let soname = table.add(soname);
        let needed = needed.iter().map(|n| table.add(n)).collect();
        let symbols = dynsyms
            .iter()
            .map(|&s| {
                if s == 0 {
                    0
                } else {
                    table.add(&obj.symbols[s].name)
                }
            })
            .collect();
        DynamicStrings {
            table,
            soname,
            needed,
            symbols,
        }
    }
}

/// The SysV ELF hash of a symbol name.
fn sysv_hash(name: &[u8]) -> u32 {
    name.iter().fold(0u32, |h, &c| {
        let h = (h << 4).wrapping_add(c as u32);
        let high = h & 0xf000_0000;
        (h ^ (high >> 24)) & !high
    })
}

/// `.hash` for symbols named `names` (`.dynsym` order).
fn hash_table(names: &[&[u8]]) -> Vec<u8> {
    let buckets_len = (names.len() / 2).max(1);
    let mut buckets = vec![0u32; buckets_len];
    let mut chains = vec![0u32; names.len()];
    for (i, name) in names.iter().enumerate().skip(1) {
        let b = sysv_hash(name) as usize % buckets_len;
        chains[i] = buckets[b];
        buckets[b] = i as u32;
    }
    let header = [buckets_len as u32, names.len() as u32];
    words(&[&header[..], &buckets, &chains].concat())
}

fn words(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

// ---------------------------------------------------------------------
// The output file.

/// What an output section is, apart from where it goes.
#[derive(Clone, Copy)]
struct SectionKind {
    kind: u32,
    flags: u32,
    align: u32,
    entsize: u32,
}

const fn section_kind(kind: u32, flags: u32, align: u32, entsize: u32) -> SectionKind {
    SectionKind {
        kind,
        flags,
        align,
        entsize,
    }
}

const PLT: SectionKind = section_kind(SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 16, 0);
const GOT: SectionKind = section_kind(SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, 4, 4);
const DYNSYM: SectionKind = section_kind(SHT_DYNSYM, SHF_ALLOC, 4, SYMBOL_SIZE);
const DYNSTR: SectionKind = section_kind(SHT_STRTAB, SHF_ALLOC, 1, 0);
const HASH: SectionKind = section_kind(SHT_HASH, SHF_ALLOC, 4, 4);
const RELA_DYN: SectionKind = section_kind(SHT_RELA, SHF_ALLOC, 4, RELA_SIZE);
const RELA_PLT: SectionKind = section_kind(SHT_RELA, SHF_ALLOC | SHF_INFO_LINK, 4, RELA_SIZE);
const DYNAMIC: SectionKind = section_kind(SHT_DYNAMIC, SHF_ALLOC | SHF_WRITE, 4, 8);
const STRTAB: SectionKind = section_kind(SHT_STRTAB, 0, 1, 0);
const SYMTAB: SectionKind = section_kind(SHT_SYMTAB, 0, 4, SYMBOL_SIZE);

/// An output section header.
struct OutSection {
    name: String,
    kind: SectionKind,
    addr: u32,
    offset: u32,
    size: u32,
    link: u32,
    info: u32,
}

/// The file being written. Loaded sections have vaddr == file offset.
struct Output {
    bytes: Vec<u8>,
    sections: Vec<OutSection>,
}

/// Refuse outputs past this size: PC-relative arithmetic stays in i32, and
/// no Hexagon DSP has memory for more.
const MAX_OUTPUT_SIZE: usize = 1 << 30;

impl Output {
    fn new() -> Output {
        let headers = ELF_HEADER_SIZE + PROGRAM_HEADERS * PROGRAM_HEADER_SIZE;
        let null = OutSection {
            name: String::new(),
            kind: section_kind(SHT_NULL, 0, 0, 0),
            addr: 0,
            offset: 0,
            size: 0,
            link: 0,
            info: 0,
        };
        Output {
            bytes: vec![0; headers as usize],
            sections: vec![null],
        }
    }

    fn len(&self) -> u32 {
        self.bytes.len() as u32
    }

    /// Pad with zeros to a multiple of `align` (a power of two, at most a page).
    fn align(&mut self, align: u32) {
        let len = (self.len() + align - 1) & !(align - 1);
        self.bytes.resize(len as usize, 0);
    }

    /// Append a section of `size` bytes, `data` then zeros; its index.
    fn add(&mut self, name: &str, kind: SectionKind, data: &[u8], size: u32) -> Result<usize> {
        if self.bytes.len() + size as usize + kind.align as usize > MAX_OUTPUT_SIZE
            || self.sections.len() >= SHN_LORESERVE as usize
        {
            return Err(error(format!(
                "the shared object would be too large (at section {name})"
            )));
        }
        self.align(kind.align);
        let offset = self.len();
        self.bytes.extend_from_slice(data);
        self.bytes.resize((offset + size) as usize, 0);
        let addr = if kind.flags & SHF_ALLOC != 0 {
            offset
        } else {
            0
        };
        let name = name.to_string();
        self.sections.push(OutSection {
            name,
            kind,
            addr,
            offset,
            size,
            link: 0,
            info: 0,
        });
        Ok(self.sections.len() - 1)
    }

    /// Append a section holding `data`.
    fn add_data(&mut self, name: &str, kind: SectionKind, data: &[u8]) -> Result<usize> {
        let size =
            u32::try_from(data.len()).map_err(|_| error(format!("section {name} is too large")))?;
        self.add(name, kind, data, size)
    }

    fn set_links(&mut self, section: usize, link: usize, info: u32) {
        self.sections[section].link = link as u32;
        self.sections[section].info = info;
    }

    fn addr(&self, section: usize) -> u32 {
        self.sections[section].addr
    }

    fn end(&self, section: usize) -> u32 {
        self.sections[section].offset + self.sections[section].size
    }

    fn word(&self, at: u32) -> u32 {
        let at = at as usize;
        u32::from_le_bytes([
            self.bytes[at],
            self.bytes[at + 1],
            self.bytes[at + 2],
            self.bytes[at + 3],
        ])
    }

    fn set_word(&mut self, at: u32, value: u32) {
        self.put(at, &value.to_le_bytes());
    }

    fn put(&mut self, at: u32, data: &[u8]) {
        self.bytes[at as usize..at as usize + data.len()].copy_from_slice(data);
    }
}

/// Where everything went.
struct Layout {
    /// The output section of each input section.
    sections: Vec<Option<usize>>,
    plt: usize,
    got: usize,
    dynsym: usize,
    rela_dyn: usize,
    rela_plt: usize,
    dynamic: usize,
    /// The end of the read+execute segment and the start of the
    /// read+write one.
    text_end: u32,
    data_start: u32,
}

/// Lay out every section. The contents that depend on addresses (code and
/// data relocations, `.plt`, `.got`, `.dynsym`, the dynamic relocations)
/// are written afterwards, in place.
fn lay_out(
    out: &mut Output,
    obj: &Object,
    places: &[Option<Segment>],
    imports: &Imports,
    dynsyms: &[usize],
    strings: &DynamicStrings,
) -> Result<Layout> {
    let plt_entries = imports.plt.order.len() as u32;
    let mut sections = vec![None; obj.sections.len()];
    let plt = out.add(".plt", PLT, &[], PLT_ENTRY_SIZE * plt_entries)?;
    place_sections(out, obj, places, Segment::Text, &mut sections)?;
    let text_end = out.len();
    out.align(PAGE);
    let data_start = out.len();
    place_sections(out, obj, places, Segment::Data, &mut sections)?;
    let got = out.add(".got", GOT, &[], 4 * (GOT_RESERVED + plt_entries))?;
    let dynsym = out.add(".dynsym", DYNSYM, &[], SYMBOL_SIZE * dynsyms.len() as u32)?;
    let dynstr = out.add_data(".dynstr", DYNSTR, &strings.table.bytes)?;
    let names: Vec<&[u8]> = dynsyms
        .iter()
        .map(|&s| obj.symbols.get(s).map_or(&b""[..], |s| s.name.as_bytes()))
        .collect();
    let hash = out.add_data(".hash", HASH, &hash_table(&names))?;
    let rela_dyn_size = RELA_SIZE * imports.dynamic_words as u32;
    let rela_dyn = out.add(".rela.dyn", RELA_DYN, &[], rela_dyn_size)?;
    let rela_plt = out.add(".rela.plt", RELA_PLT, &[], RELA_SIZE * plt_entries)?;
    out.set_links(dynsym, dynstr, 1);
    out.set_links(hash, dynsym, 0);
    out.set_links(rela_dyn, dynsym, 0);
    out.set_links(rela_plt, dynsym, got as u32);
    let mut layout = Layout {
        sections,
        plt,
        got,
        dynsym,
        rela_dyn,
        rela_plt,
        dynamic: 0,
        text_end,
        data_start,
    };
    let entries = dynamic_entries(out, &layout, strings, dynstr, hash);
    layout.dynamic = out.add_data(".dynamic", DYNAMIC, &words(&entries))?;
    out.set_links(layout.dynamic, dynstr, 0);
    Ok(layout)
}

/// Copy the input sections of `segment`, in input order.
fn place_sections(
    out: &mut Output,
    obj: &Object,
    places: &[Option<Segment>],
    segment: Segment,
    sections: &mut [Option<usize>],
) -> Result<()> {
    for (i, s) in obj
        .sections
        .iter()
        .enumerate()
        .filter(|(i, _)| places[*i] == Some(segment))
    {
        // A NOBITS section becomes zeros in the file, so that each segment
        // has file size == memory size.
        let kind = if s.kind == SHT_NOBITS {
            SHT_PROGBITS
        } else {
            s.kind
        };
        let mut flags = s.flags & (SHF_WRITE | SHF_ALLOC | SHF_EXECINSTR | SHF_MERGE | SHF_STRINGS);
        if segment == Segment::Data {
            flags |= SHF_WRITE;
        }
        let kind = section_kind(kind, flags, s.align, s.entsize);
        sections[i] = Some(out.add(&s.name, kind, s.data, s.size)?);
    }
    Ok(())
}

/// DT_INIT_ARRAY for a section of constructors, DT_FINI_ARRAY for one of
/// destructors (LLVM uses .ctors and .dtors for hexagon-unknown-none-elf).
fn array_role(kind: u32, name: &str) -> Option<u32> {
    // `.ctors.NNNNN` holds constructors of priority NNNNN.
    let named = |base: &str| {
        name.strip_prefix(base)
            .is_some_and(|p| p.is_empty() || p.starts_with('.'))
    };
    if kind == SHT_INIT_ARRAY || named(".ctors") {
        Some(DT_INIT_ARRAY)
    } else if kind == SHT_FINI_ARRAY || named(".dtors") {
        Some(DT_FINI_ARRAY)
    } else {
        None
    }
}

/// The `.dynamic` entries (tag, value pairs, flattened).
fn dynamic_entries(
    out: &Output,
    l: &Layout,
    strings: &DynamicStrings,
    dynstr: usize,
    hash: usize,
) -> Vec<u32> {
    let size = |s: usize| out.sections[s].size;
    let mut d: Vec<[u32; 2]> = strings.needed.iter().map(|&n| [DT_NEEDED, n]).collect();
    if strings.soname != 0 {
        d.push([DT_SONAME, strings.soname]);
    }
    d.extend([
        [DT_SYMBOLIC, 0],
        [DT_HASH, out.addr(hash)],
        [DT_SYMTAB, out.addr(l.dynsym)],
        [DT_SYMENT, SYMBOL_SIZE],
        [DT_STRTAB, out.addr(dynstr)],
        [DT_STRSZ, size(dynstr)],
        [DT_PLTGOT, out.addr(l.got)],
        [DT_JMPREL, out.addr(l.rela_plt)],
        [DT_PLTRELSZ, size(l.rela_plt)],
        [DT_PLTREL, DT_RELA],
        [DT_RELA, out.addr(l.rela_dyn)],
        [DT_RELASZ, size(l.rela_dyn)],
        [DT_RELAENT, RELA_SIZE],
        [DT_FLAGS, DF_SYMBOLIC | DF_BIND_NOW],
        [DT_FLAGS_1, DF_1_NOW],
        [DT_HEXAGON_VER, 3],
    ]);
    for (array, array_size) in [
        (DT_INIT_ARRAY, DT_INIT_ARRAYSZ),
        (DT_FINI_ARRAY, DT_FINI_ARRAYSZ),
    ] {
        let is_array = |&&s: &&usize| {
            array_role(out.sections[s].kind.kind, &out.sections[s].name) == Some(array)
        };
        if let Some(&s) = l.sections.iter().flatten().find(is_array) {
            d.extend([[array, out.addr(s)], [array_size, size(s)]]);
        }
    }
    d.push([DT_NULL, 0]);
    d.concat()
}

// ---------------------------------------------------------------------
// Relocating.

/// A relocation for the loader.
struct DynReloc {
    offset: u32,
    /// Index in `.dynsym` (0 for R_HEX_RELATIVE).
    symbol: u32,
    kind: u32,
    addend: u32,
}

/// What a relocation's symbol stands for in the output.
enum Target {
    /// An address that does not move with the load address.
    Absolute(u32),
    /// An address in the output (which moves with the load address).
    Local(u32),
    /// A symbol the loader finds (the `.dynsym` index).
    Import(u32),
}

impl Target {
    fn address(&self) -> Option<u32> {
        match *self {
            Target::Absolute(a) | Target::Local(a) => Some(a),
            Target::Import(_) => None,
        }
    }
}

fn plt_entry_addr(out: &Output, layout: &Layout, index: usize) -> u32 {
    out.addr(layout.plt) + PLT_ENTRY_SIZE * index as u32
}

fn got_slot_addr(out: &Output, layout: &Layout, index: usize) -> u32 {
    out.addr(layout.got) + 4 * (GOT_RESERVED + index as u32)
}

/// The target of relocation `i` of input section `s`.
fn resolve(
    obj: &Object,
    out: &Output,
    layout: &Layout,
    imports: &Imports,
    s: usize,
    relocs: &[Rela],
    i: usize,
) -> Result<Target> {
    let r = &relocs[i];
    if r.sym == 0 {
        return Ok(Target::Absolute(0));
    }
    let sym = &obj.symbols[r.sym];
    match sym.shndx {
        SHN_UNDEF => match imports.plt.position.get(&r.sym) {
            Some(&p) if is_branch(relocs, i) => Ok(Target::Local(plt_entry_addr(out, layout, p))),
            _ => Ok(Target::Import(imports.dynsym_index(r.sym)?)),
        },
        SHN_ABS => Ok(Target::Absolute(sym.value)),
        n if n >= SHN_LORESERVE => Err(error(format!(
            "{} refers to `{}` with section index {n:#x} (a common symbol?), which is not supported",
            describe(obj, s, r),
            sym.name
        ))),
        n => match layout.sections.get(n as usize) {
            Some(&Some(o)) => Ok(Target::Local(out.addr(o).wrapping_add(sym.value))),
            _ => Err(error(format!(
                "{} refers to `{}` in a section that is not loaded",
                describe(obj, s, r),
                sym.name
            ))),
        },
    }
}

/// Apply every relocation of the loaded sections; the relocations the
/// loader must apply to data.
fn apply_relocations(
    out: &mut Output,
    obj: &Object,
    layout: &Layout,
    imports: &Imports,
) -> Result<Vec<DynReloc>> {
    let mut dynamic = vec![];
    for (s, relocs) in loaded_relocations(obj, |s| layout.sections[s].is_some()) {
        let Some(o) = layout.sections[s] else {
            continue;
        };
        for (i, r) in relocs.iter().enumerate() {
            let Some(form) = form(r.kind) else { continue };
            if r.offset
                .checked_add(4)
                .is_none_or(|end| end > out.sections[o].size)
            {
                return Err(error(format!(
                    "{} is outside its section",
                    describe(obj, s, r)
                )));
            }
            let p = out.addr(o) + r.offset;
            let target = resolve(obj, out, layout, imports, s, relocs, i)?;
            let a = r.addend as u32;
            let value = target.address().map(|t| t.wrapping_add(a));
            match (form, target, value) {
                (Form::Word, Target::Import(symbol), _) => {
                    out.set_word(p, a);
                    dynamic.push(DynReloc {
                        offset: p,
                        symbol,
                        kind: R_HEX_32,
                        addend: a,
                    });
                }
                (Form::Word, Target::Local(_), Some(v)) => {
                    out.set_word(p, v);
                    dynamic.push(DynReloc {
                        offset: p,
                        symbol: 0,
                        kind: R_HEX_RELATIVE,
                        addend: v,
                    });
                }
                (Form::Word, _, Some(v)) => out.set_word(p, v),
                (Form::PcrelWord, _, Some(v)) => out.set_word(p, v.wrapping_sub(p)),
                (Form::Insn(insn), _, Some(v)) => {
                    let word = patch(out.word(p), insn, v.wrapping_sub(p))
                        .map_err(|e| error(format!("{}: {e}", describe(obj, s, r))))?;
                    out.set_word(p, word);
                }
                _ => {
                    return Err(error(format!(
                        "{} has no address to use",
                        describe(obj, s, r)
                    )))
                }
            }
        }
    }
    Ok(dynamic)
}

/// Put the bits of `value`, lowest first, into the 1-bits of `mask` in
/// `word`, lowest first.
fn scatter(word: u32, mask: u32, value: u32) -> u32 {
    let mut out = word & !mask;
    let mut v = value;
    for bit in (0..32).filter(|b| mask & (1 << b) != 0) {
        out |= (v & 1) << bit;
        v >>= 1;
    }
    out
}

/// `word` with `offset` (S+A-P) encoded the way `insn` says.
fn patch(word: u32, insn: Insn, offset: u32) -> std::result::Result<u32, String> {
    match insn {
        Insn::Branch { mask, bits } => {
            let offset = offset as i32;
            let units = offset >> 2;
            let limit = 1i32 << (bits - 1);
            if offset & 3 != 0 {
                return Err(format!(
                    "the branch target is not 4-byte aligned (offset {offset})"
                ));
            }
            if units < -limit || units >= limit {
                return Err(format!(
                    "the branch offset {offset} does not fit in {bits} bits"
                ));
            }
            Ok(scatter(word, mask, units as u32))
        }
        Insn::BranchLow(mask) => Ok(scatter(word, mask, offset & 0x3f)),
        Insn::Extender => Ok(scatter(word, EXTENDER_MASK, offset >> 6)),
        Insn::AddPcLow if word >> 16 == ADD_PC_OPCODE => {
            Ok(scatter(word, ADD_PC_MASK, offset & 0x3f))
        }
        Insn::AddPcLow => Err(format!(
            "instruction {word:#010x} is not `Rd = add(pc, #u6)`"
        )),
    }
}

/// The four words of a PLT entry whose GOT slot is `to_slot` bytes after it.
fn plt_entry(to_slot: u32) -> [u32; 4] {
    [
        scatter(PLT_IMMEXT, EXTENDER_MASK, to_slot >> 6),
        scatter(PLT_ADD_PC, ADD_PC_MASK, to_slot & 0x3f),
        PLT_LOAD,
        PLT_JUMP,
    ]
}

/// Write `.plt` and `.got`; the R_HEX_JMP_SLOT relocations of the slots.
fn write_plt(out: &mut Output, layout: &Layout, imports: &Imports) -> Result<Vec<DynReloc>> {
    out.set_word(out.addr(layout.got), out.addr(layout.dynamic));
    let mut relocs = vec![];
    for (k, &sym) in imports.plt.order.iter().enumerate() {
        let entry = plt_entry_addr(out, layout, k);
        let slot = got_slot_addr(out, layout, k);
        out.put(entry, &words(&plt_entry(slot - entry)));
        let symbol = imports.dynsym_index(sym)?;
        relocs.push(DynReloc {
            offset: slot,
            symbol,
            kind: R_HEX_JMP_SLOT,
            addend: 0,
        });
    }
    Ok(relocs)
}

fn write_relocations(out: &mut Output, section: usize, relocs: &[DynReloc]) -> Result<()> {
    let bytes = words(
        &relocs
            .iter()
            .flat_map(|r| [r.offset, (r.symbol << 8) | r.kind, r.addend])
            .collect::<Vec<_>>(),
    );
    if bytes.len() != out.sections[section].size as usize {
        return Err(error(format!(
            "{} has the wrong size",
            out.sections[section].name
        )));
    }
    out.put(out.addr(section), &bytes);
    Ok(())
}

// ---------------------------------------------------------------------
// Symbol tables and headers.

/// The ELF32 symbol entry of input symbol `sym` in the output, named by
/// string table offset `name`.
fn symbol_entry(
    obj: &Object,
    out: &Output,
    layout: &Layout,
    sym: usize,
    name: u32,
) -> Result<Vec<u8>> {
    let s = &obj.symbols[sym];
    let (value, shndx) = match s.shndx {
        SHN_UNDEF => (0, SHN_UNDEF),
        SHN_ABS => (s.value, SHN_ABS),
        n => match layout.sections.get(n as usize) {
            Some(&Some(o)) => (out.addr(o).wrapping_add(s.value), o as u16),
            _ => {
                return Err(error(format!(
                    "symbol `{}` is not in a loaded section",
                    s.name
                )))
            }
        },
    };
    let mut e = words(&[name, value, s.size]);
    e.extend([s.info, s.other]);
    e.extend(shndx.to_le_bytes());
    Ok(e)
}

fn write_dynsym(
    out: &mut Output,
    obj: &Object,
    layout: &Layout,
    dynsyms: &[usize],
    names: &[u32],
) -> Result<()> {
    let mut at = out.addr(layout.dynsym) + SYMBOL_SIZE;
    for (&sym, &name) in dynsyms.iter().zip(names).skip(1) {
        let entry = symbol_entry(obj, out, layout, sym, name)?;
        out.put(at, &entry);
        at += SYMBOL_SIZE;
    }
    Ok(())
}

/// Write `.symtab` and `.strtab` (not loaded): every named symbol of the
/// loaded sections and the imports, so tools show names for local
/// functions and data too.
fn write_symtab(out: &mut Output, obj: &Object, layout: &Layout, imports: &Imports) -> Result<()> {
    let listed = |i: usize| {
        let s = &obj.symbols[i];
        let in_loaded = s.shndx == SHN_ABS
            || (s.shndx < SHN_LORESERVE
                && layout
                    .sections
                    .get(s.shndx as usize)
                    .is_some_and(|o| o.is_some()));
        !matches!(s.kind(), STT_SECTION | STT_FILE)
            && !s.name.is_empty()
            && (in_loaded || imports.symbols.position.contains_key(&i))
    };
    let mut names = StringTable::new();
    let mut entries = vec![0u8; SYMBOL_SIZE as usize];
    let mut locals = 1;
    // ELF lists locals first.
    for local in [true, false] {
        for i in (1..obj.symbols.len())
            .filter(|&i| listed(i) && (obj.symbols[i].binding() == STB_LOCAL) == local)
        {
            let name = names.add(&obj.symbols[i].name);
            entries.extend(symbol_entry(obj, out, layout, i, name)?);
            locals += local as u32;
        }
    }
    let strtab = out.add_data(".strtab", STRTAB, &names.bytes)?;
    let symtab = out.add_data(".symtab", SYMTAB, &entries)?;
    out.set_links(symtab, strtab, locals);
    Ok(())
}

fn program_headers(out: &Output, layout: &Layout) -> Vec<u32> {
    let data_end = out.end(layout.dynamic);
    let dynamic = &out.sections[layout.dynamic];
    let load = |start: u32, end: u32, flags: u32| {
        [
            PT_LOAD,
            start,
            start,
            start,
            end - start,
            end - start,
            flags,
            PAGE,
        ]
    };
    [
        load(0, layout.text_end, PF_R | PF_X),
        load(layout.data_start, data_end, PF_R | PF_W),
        [
            PT_DYNAMIC,
            dynamic.offset,
            dynamic.addr,
            dynamic.addr,
            dynamic.size,
            dynamic.size,
            PF_R | PF_W,
            4,
        ],
    ]
    .concat()
}

fn elf_header(flags: u32, shoff: u32, shnum: u16, shstrndx: u16) -> Vec<u8> {
    let mut h = b"\x7fELF\x01\x01\x01".to_vec();
    h.resize(16, 0);
    let half = |v: u16| v.to_le_bytes();
    h.extend(half(ET_DYN));
    h.extend(half(EM_HEXAGON));
    h.extend(words(&[1, 0, ELF_HEADER_SIZE, shoff, flags]));
    for v in [
        ELF_HEADER_SIZE,
        PROGRAM_HEADER_SIZE,
        PROGRAM_HEADERS,
        SECTION_HEADER_SIZE,
    ] {
        h.extend(half(v as u16));
    }
    h.extend(half(shnum));
    h.extend(half(shstrndx));
    h
}

/// Add `.shstrtab` and the section headers, write the ELF and program
/// headers: the finished file.
fn finish(mut out: Output, flags: u32, layout: &Layout) -> Result<Vec<u8>> {
    let mut names = StringTable::new();
    let shstrtab_name = names.add(".shstrtab");
    let mut name_offsets: Vec<u32> = out.sections.iter().map(|s| names.add(&s.name)).collect();
    name_offsets.push(shstrtab_name);
    let shstrtab = out.add_data(".shstrtab", STRTAB, &names.bytes)?;
    out.align(4);
    let shoff = out.len();
    let headers: Vec<u32> = out
        .sections
        .iter()
        .zip(&name_offsets)
        .flat_map(|(s, &name)| {
            [
                name,
                s.kind.kind,
                s.kind.flags,
                s.addr,
                s.offset,
                s.size,
                s.link,
                s.info,
                s.kind.align,
                s.kind.entsize,
            ]
        })
        .collect();
    let mut header = elf_header(flags, shoff, out.sections.len() as u16, shstrtab as u16);
    header.extend(words(&program_headers(&out, layout)));
    out.bytes.extend(words(&headers));
    out.put(0, &header);
    Ok(out.bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jit::target_machine_for;
    use crate::target::JitTarget;
    use inkwell::context::Context;
    use inkwell::memory_buffer::MemoryBuffer;
    use inkwell::targets::{CodeModel, FileType, RelocMode, TargetTriple};

    /// Compile LLVM IR the way ferrohalide compiles Hexagon code.
    fn hexagon_object(ir: &str) -> Vec<u8> {
        let target = JitTarget::new("hexagonv66", "+hvxv66,+hvx-length128b");
        let triple = TargetTriple::create("hexagon-unknown-none-elf");
        let machine =
            target_machine_for(&target, &triple, CodeModel::Default, RelocMode::PIC).unwrap();
        let ctx = Context::create();
        let buffer = MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "test");
        let module = ctx.create_module_from_ir(buffer).unwrap();
        machine
            .write_to_memory_buffer(&module, FileType::Object)
            .unwrap()
            .as_slice()
            .to_vec()
    }

    const PROGRAM: &str = r#"
target triple = "hexagon-unknown-none-elf"
@table = private unnamed_addr constant [8 x i32] [i32 1, i32 2, i32 3, i32 5, i32 8, i32 13, i32 21, i32 34], align 4
@greeting = dso_local constant [10 x i8] c"greetings\00"
@.str = private unnamed_addr constant [11 x i8] c"the string\00"
@ptr = dso_local global ptr @.str, align 4
@ext_data = external global i32
@ptrs = dso_local global [2 x ptr] [ptr @greeting, ptr @ext_data], align 4
@vectors = private unnamed_addr constant <32 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7, i32 8, i32 9, i32 10, i32 11, i32 12, i32 13, i32 14, i32 15, i32 16, i32 17, i32 18, i32 19, i32 20, i32 21, i32 22, i32 23, i32 24, i32 25, i32 26, i32 27, i32 28, i32 29, i32 30, i32 31>, align 128
declare i32 @ext(i32)
define internal i32 @local(i32 %x) noinline {
  %y = mul i32 %x, 7
  ret i32 %y
}
define i32 @entry(i32 %i) {
  %a = call i32 @ext(i32 %i)
  %b = call i32 @local(i32 %a)
  %p = getelementptr [8 x i32], ptr @table, i32 0, i32 %i
  %t = load volatile i32, ptr %p
  %g = getelementptr [10 x i8], ptr @greeting, i32 0, i32 %i
  %c = load volatile i8, ptr %g
  %cz = zext i8 %c to i32
  %s = add i32 %b, %t
  %r = add i32 %s, %cz
  %e = call i32 @ext(i32 %r)
  ret i32 %e
}
define void @vadd(ptr %out, ptr %in) {
  %v = load <32 x i32>, ptr @vectors, align 128
  %u = load <32 x i32>, ptr %in, align 128
  %w = add <32 x i32> %v, %u
  store <32 x i32> %w, ptr %out, align 128
  ret void
}
"#;

    /// The parsed output, through the same reader the linker uses plus the
    /// program headers.
    struct Shared<'a> {
        bytes: &'a [u8],
        header: Header,
        sections: Vec<Section<'a>>,
    }

    impl<'a> Shared<'a> {
        fn new(bytes: &'a [u8]) -> Shared<'a> {
            let header = read_header(Bytes(bytes)).unwrap();
            let sections = read_sections(Bytes(bytes), &header).unwrap();
            Shared {
                bytes,
                header,
                sections,
            }
        }

        fn section(&self, name: &str) -> (usize, &Section<'a>) {
            let i = self
                .sections
                .iter()
                .position(|s| s.name == name)
                .unwrap_or_else(|| panic!("no {name}"));
            (i, &self.sections[i])
        }

        fn section_addr(&self, index: usize) -> u32 {
            Bytes(self.bytes)
                .u32(self.header.shoff as u64 + 40 * index as u64 + 12)
                .unwrap()
        }

        fn program_headers(&self) -> Vec<[u32; 8]> {
            let b = Bytes(self.bytes);
            (0..b.u16(44).unwrap() as u64)
                .map(|i| {
                    std::array::from_fn(|f| {
                        b.u32(b.u32(28).unwrap() as u64 + 32 * i + 4 * f as u64)
                            .unwrap()
                    })
                })
                .collect()
        }

        fn symbols(&self, table: &str) -> Vec<Symbol> {
            let (_, symtab) = self.section(table);
            read_symbols(symtab, self.sections[symtab.link as usize].data).unwrap()
        }

        fn symbol(&self, table: &str, name: &str) -> Symbol {
            self.symbols(table)
                .into_iter()
                .find(|s| s.name == name)
                .unwrap_or_else(|| panic!("no {name}"))
        }

        /// (offset, symbol index, type, addend) of a RELA section.
        fn relocations(&self, name: &str) -> Vec<(u32, u32, u32, u32)> {
            let w = |e: &[u8], i| u32::from_le_bytes(e[i..i + 4].try_into().unwrap());
            let (_, s) = self.section(name);
            s.data
                .chunks_exact(12)
                .map(|e| (w(e, 0), w(e, 4) >> 8, w(e, 4) & 0xff, w(e, 8)))
                .collect()
        }

        fn dynamic(&self) -> HashMap<u32, u32> {
            let (_, s) = self.section(".dynamic");
            s.data
                .chunks_exact(8)
                .map(|e| (Bytes(e).u32(0).unwrap(), Bytes(e).u32(4).unwrap()))
                .collect()
        }

        fn word(&self, addr: u32) -> u32 {
            Bytes(self.bytes).u32(addr as u64).unwrap()
        }

        /// Find `name` through `.hash` (what a loader's dlsym does).
        fn hash_lookup(&self, name: &str) -> Option<Symbol> {
            let (_, hash) = self.section(".hash");
            let h = |i: usize| Bytes(hash.data).u32(4 * i as u64).unwrap() as usize;
            let symbols = self.symbols(".dynsym");
            let mut i = h(2 + sysv_hash(name.as_bytes()) as usize % h(0));
            while i != 0 {
                if symbols[i].name == name {
                    return symbols.into_iter().nth(i);
                }
                i = h(2 + h(0) + i);
            }
            None
        }
    }

    /// Gather the bits of `word` under `mask` (the inverse of `scatter`).
    fn gather(word: u32, mask: u32) -> u32 {
        (0..32)
            .filter(|b| mask & (1 << b) != 0)
            .enumerate()
            .fold(0, |v, (i, b)| v | ((word >> b) & 1) << i)
    }

    fn sign_extend(value: u32, bits: u32) -> u32 {
        (((value << (32 - bits)) as i32) >> (32 - bits)) as u32
    }

    /// The targets of the `call`s and `Rd = add(pc, ...)`s in `len` bytes
    /// of code at `start`, decoded with packet addresses as the PC.
    fn code_targets(so: &Shared, start: u32, len: u32) -> (Vec<u32>, Vec<u32>) {
        let (mut calls, mut pc_adds) = (vec![], vec![]);
        let mut packet = start;
        let mut extender = None;
        for at in (start..start + len).step_by(4) {
            let w = so.word(at);
            let high = |bits| extender.map_or(0, |x: u32| x << 6) | bits;
            if w >> 28 == 0 && (w >> 14) & 3 != 0 {
                extender = Some(gather(w, EXTENDER_MASK));
            } else {
                if w & 0xfe00_0001 == 0x5a00_0000 {
                    let offset = match extender {
                        Some(_) => high(gather(w, B22_MASK) & 0x3f),
                        None => sign_extend(gather(w, B22_MASK), 22) << 2,
                    };
                    calls.push(packet.wrapping_add(offset));
                }
                if w >> 16 == ADD_PC_OPCODE {
                    pc_adds.push(packet.wrapping_add(high(gather(w, ADD_PC_MASK))));
                }
                extender = None;
            }
            // The parse bits of a packet's last word are 11 (or 00, a duplex).
            if matches!((w >> 14) & 3, 0 | 3) {
                packet = at + 4;
            }
        }
        (calls, pc_adds)
    }

    fn find(haystack: &[u8], needle: &[u8]) -> u32 {
        haystack
            .windows(needle.len())
            .position(|w| w == needle)
            .unwrap() as u32
    }

    #[test]
    fn scatter_matches_llvm_mc_encodings() {
        // `r14 = add(pc, #16)` is 0x6a49c80e; `r0 = ##0x12345678` starts
        // with immext word 0x01235159 (llvm-mc-19 -show-encoding).
        assert_eq!(scatter(PLT_ADD_PC, ADD_PC_MASK, 16), 0x6a49_c80e);
        assert_eq!(
            scatter(PLT_IMMEXT, EXTENDER_MASK, 0x1234_5678 >> 6),
            0x0123_5159
        );
        assert_eq!(gather(scatter(0, B22_MASK, 0x2a_5a5a), B22_MASK), 0x2a_5a5a);
    }

    #[test]
    fn links_calls_data_and_pointers() {
        let object = hexagon_object(PROGRAM);
        let bytes =
            link_shared_object(&object, "libtest.so", &["libc.so", "libhalide.so"]).unwrap();
        let so = Shared::new(&bytes);
        assert_eq!((so.header.kind, so.header.machine), (ET_DYN, EM_HEXAGON));
        assert_eq!(so.header.flags, read_header(Bytes(&object)).unwrap().flags);

        let phdrs = so.program_headers();
        let kinds: Vec<u32> = phdrs.iter().map(|p| p[0]).collect();
        assert_eq!(kinds, [PT_LOAD, PT_LOAD, PT_DYNAMIC]);
        assert_eq!((phdrs[0][1], phdrs[0][6]), (0, PF_R | PF_X));
        assert_eq!((phdrs[1][1] % PAGE, phdrs[1][6]), (0, PF_R | PF_W));
        for p in &phdrs {
            assert_eq!(p[1], p[2], "vaddr == offset");
        }

        // Exports and imports.
        let entry = so.symbol(".dynsym", "entry");
        assert_eq!(
            (entry.binding(), entry.kind(), entry.shndx),
            (STB_GLOBAL, 2, so.section(".text").0 as u16)
        );
        let greeting = so.symbol(".dynsym", "greeting");
        assert_eq!(&bytes[greeting.value as usize..][..10], b"greetings\0");
        for name in ["ext", "ext_data"] {
            let s = so.symbol(".dynsym", name);
            assert_eq!((s.shndx, s.binding()), (SHN_UNDEF, STB_GLOBAL));
        }
        for name in ["entry", "vadd", "greeting", "ptr", "ptrs", "ext"] {
            assert_eq!(so.hash_lookup(name).map(|s| s.name), Some(name.to_string()));
        }
        assert!(so.hash_lookup("local").is_none());
        let dynsym_index = |name: &str| {
            so.symbols(".dynsym")
                .iter()
                .position(|s| s.name == name)
                .unwrap() as u32
        };

        // The PLT slot of `ext`, and the calls to it.
        let jmp_slots = so.relocations(".rela.plt");
        assert_eq!(jmp_slots.len(), 1);
        let (slot, sym, kind, _) = jmp_slots[0];
        assert_eq!((sym, kind), (dynsym_index("ext"), R_HEX_JMP_SLOT));
        let (got, _) = so.section(".got");
        assert!(slot >= so.section_addr(got));
        let plt = so.section_addr(so.section(".plt").0);
        assert_eq!(code_targets(&so, plt, 16).1, [slot]);
        let local = so.symbol(".symtab", "local");
        let (calls, pc_adds) = code_targets(&so, entry.value, entry.size);
        assert_eq!(calls, [plt, local.value, plt]);
        let table = find(&bytes, &words(&[1, 2, 3, 5, 8, 13, 21, 34]));
        assert!(
            pc_adds.contains(&table) && pc_adds.contains(&greeting.value),
            "{pc_adds:x?}"
        );
        let vadd = so.symbol(".dynsym", "vadd");
        let vectors = find(&bytes, &words(&(0..32).collect::<Vec<_>>()));
        assert_eq!(vectors % 128, 0);
        assert_eq!(code_targets(&so, vadd.value, vadd.size).1, [vectors]);

        // Pointers in data.
        let relocs = so.relocations(".rela.dyn");
        let ptr = so.symbol(".dynsym", "ptr").value;
        let ptrs = so.symbol(".dynsym", "ptrs").value;
        let string = find(&bytes, b"the string\0");
        assert!(
            relocs.contains(&(ptr, 0, R_HEX_RELATIVE, string)),
            "{relocs:x?}"
        );
        assert!(relocs.contains(&(ptrs, 0, R_HEX_RELATIVE, greeting.value)));
        assert!(relocs.contains(&(ptrs + 4, dynsym_index("ext_data"), R_HEX_32, 0)));
        assert_eq!(so.word(ptr), string);

        let dynamic = so.dynamic();
        assert_eq!(dynamic[&DT_FLAGS], DF_SYMBOLIC | DF_BIND_NOW);
        assert_eq!(dynamic[&DT_HEXAGON_VER], 3);
        assert_eq!(
            dynamic[&DT_JMPREL],
            so.section_addr(so.section(".rela.plt").0)
        );
        let soname = &so.section(".dynstr").1.data[dynamic[&DT_SONAME] as usize..];
        assert!(soname.starts_with(b"libtest.so\0"));
    }

    #[test]
    fn links_every_branch_kind() {
        // Branches LLVM's assembler leaves to the linker: to an undefined
        // function (through the PLT) and to one in another section.
        let ir = r#"
target triple = "hexagon-unknown-none-elf"
module asm ".text"
module asm ".globl f"
module asm ".type f,@function"
module asm "f:"
module asm "  { if (p0) jump:nt #ext }"
module asm "  { p0 = cmp.eq(r0,#0); if (p0.new) jump:t #ext }"
module asm "  { if (r0!=#0) jump:nt #ext }"
module asm "  { loop0(#ext, #10) }"
module asm "  { call ##ext }"
module asm "  { if (p0) jump ##g }"
module asm "  { loop0(##g, #10) }"
module asm "  { r0 = #1; jump #g }"
module asm "  { call #g }"
module asm "  jumpr r31"
module asm ".size f, .-f"
module asm ".section .text.other,\22ax\22,@progbits"
module asm ".globl g"
module asm "g:"
module asm "  jumpr r31"
"#;
        // inkwell does not initialize the Hexagon assembler, which module
        // asm needs.
        // SAFETY: LLVM's initializers may be called any number of times.
        unsafe { inkwell::llvm_sys::target::LLVM_InitializeAllAsmParsers() };
        let object = hexagon_object(ir);
        let bytes = link_shared_object(&object, "libbranch.so", &[]).unwrap();
        let so = Shared::new(&bytes);
        let plt = so.section_addr(so.section(".plt").0);
        let g = so.symbol(".dynsym", "g").value;
        // The test decodes calls only (ld.lld-19 agrees on the others).
        let f = so.symbol(".dynsym", "f");
        let (calls, _) = code_targets(&so, f.value, f.size);
        assert_eq!(calls, [plt, g]);
        assert_eq!(so.relocations(".rela.plt").len(), 1);
    }

    #[test]
    fn relocates_constructors_and_read_only_pointers() {
        let ir = r#"
target triple = "hexagon-unknown-none-elf"
module asm ".section .rodata.ptrs,\22a\22,@progbits"
module asm ".globl ro_ptr"
module asm "ro_ptr:"
module asm ".word init"
@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 65535, ptr @init, ptr null }]
define internal void @init() {
  ret void
}
"#;
        // SAFETY: LLVM's initializers may be called any number of times.
        unsafe { inkwell::llvm_sys::target::LLVM_InitializeAllAsmParsers() };
        let bytes = link_shared_object(&hexagon_object(ir), "libctor.so", &[]).unwrap();
        let so = Shared::new(&bytes);
        let init = so.symbol(".symtab", "init").value;
        let ro_ptr = so.symbol(".dynsym", "ro_ptr").value;
        let (index, _) = so.section(".rodata.ptrs");
        let data = so.program_headers()[1];
        assert!(
            so.section_addr(index) >= data[2],
            "moved to the read+write segment"
        );
        let dynamic = so.dynamic();
        let init_array = dynamic[&DT_INIT_ARRAY];
        assert_eq!(dynamic[&DT_INIT_ARRAYSZ], 4);
        let relocs = so.relocations(".rela.dyn");
        assert!(
            relocs.contains(&(ro_ptr, 0, R_HEX_RELATIVE, init)),
            "{relocs:x?}"
        );
        assert!(
            relocs.contains(&(init_array, 0, R_HEX_RELATIVE, init)),
            "{relocs:x?}"
        );
    }

    #[test]
    fn refuses_got_references() {
        let ir = r#"
target triple = "hexagon-unknown-none-elf"
@shared = global i32 0
define i32 @get() {
  %v = load volatile i32, ptr @shared
  ret i32 %v
}
"#;
        let e = link_shared_object(&hexagon_object(ir), "libgot.so", &[]).unwrap_err();
        assert!(
            e.message.contains("relocation R_HEX_GOT_") && e.message.contains("at .text+0x"),
            "{}",
            e.message
        );
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        let object = hexagon_object(PROGRAM);
        assert!(link_shared_object(&object[..40], "x", &[]).is_err());
        for len in (0..object.len()).step_by(13) {
            let _ = link_shared_object(&object[..len], "x", &[]);
        }
        // Flipping low bits keeps any corrupted size small enough to link.
        for at in 0..object.len() {
            for bit in [0, 1] {
                let mut bad = object.clone();
                bad[at] ^= 1 << bit;
                let _ = link_shared_object(&bad, "x", &[]);
            }
        }
    }

    /// Link the object named by `HEXAGON_SO_INPUT` into `HEXAGON_SO_OUTPUT`,
    /// for comparing with other linkers by hand.
    #[test]
    #[ignore]
    fn link_object_named_by_environment() {
        let input = std::env::var("HEXAGON_SO_INPUT").expect("HEXAGON_SO_INPUT");
        let output = std::env::var("HEXAGON_SO_OUTPUT").expect("HEXAGON_SO_OUTPUT");
        let object = std::fs::read(input).unwrap();
        let bytes = link_shared_object(&object, "liblinked.so", &[])
            .unwrap_or_else(|e| panic!("{}", e.message));
        std::fs::write(output, bytes).unwrap();
    }
}
