//! The classic BPF program that separates IEC 61850 traffic from the rest, for the `l2`
//! driver's sockets (`SO_ATTACH_FILTER`, socket(7)) and for the kernel bypass's tc classifier
//! (`cls_bpf` with classic `bytecode`, tc-bpf(8)): one program, so the frames the gateway's
//! sockets receive and the frames tc leaves to the gateway are exactly the same set.
//!
//! The program accepts (returns non-zero for) every frame that gander's classifier
//! (`gander_sec::view::classify`) can judge as IEC 61850 traffic, and some more; it rejects
//! only frames it is sure are "other" traffic. A frame it accepts goes to the secure path; a
//! frame it rejects is bridged by the kernel (`bypass = "tc"`) and never seen by gander.
//! Accepted:
//!
//! - EtherType 0x88B8 (GOOSE), 0x88BA (SV), 0x88B9 (GSE management) (IEC 61850-8-1 Annex C,
//!   IEC 61850-9-2);
//! - any frame that still carries a tag (0x8100, 0x88A8, 0x9100, 0x9200, 0x9300) at offset 12:
//!   the receive path has already moved the outer 802.1Q/802.1ad tag into metadata
//!   (`skb_vlan_untag` in `__netif_receive_skb_core`, net/core/dev.c), so a tag still in the
//!   data is a second one (QinQ) or a pre-standard TPID, and the whole stack is for gander's
//!   classifier to walk;
//! - IPv4 whose version or header length is bad, UDP fragments (a non-first fragment has no
//!   port to read), UDP with its header cut short, UDP to or from port 102, or UDP whose payload
//!   starts `01 40` (the CLTP UD header of IEC 61850-90-5 session PDUs);
//! - IPv6 with a bad version, any next header other than TCP (6) or ICMPv6 (58) directly after
//!   the fixed header (extension headers and fragments are walked by gander), and UDP as for
//!   IPv4.
//!
//! Offsets are from the start of the Ethernet header: a packet socket's filter sees the frame
//! from its link-layer header (`packet_rcv`, net/packet/af_packet.c), and `cls_bpf` pushes the
//! link-layer header back before running a program at ingress (`cls_bpf_classify`,
//! net/sched/cls_bpf.c). A load past the end of the frame ends a classic BPF program with 0
//! (reject), which the program only relies on where the frame cannot be IEC 61850 traffic.

use std::io;

/// One classic BPF instruction: `struct sock_filter` (linux/filter.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Insn {
    /// Opcode.
    pub code: u16,
    /// Jump offset if true (relative to the next instruction).
    pub jt: u8,
    /// Jump offset if false.
    pub jf: u8,
    /// Constant operand.
    pub k: u32,
}

// Opcode parts (linux/bpf_common.h, linux/filter.h).
const LD: u16 = 0x00;
const LDX: u16 = 0x01;
const ALU: u16 = 0x04;
const JMP: u16 = 0x05;
const RET: u16 = 0x06;
const MISC: u16 = 0x07;
const W: u16 = 0x00;
const H: u16 = 0x08;
const B: u16 = 0x10;
const ABS: u16 = 0x20;
const IND: u16 = 0x40;
const LEN: u16 = 0x80;
const MSH: u16 = 0xa0;
const ADD: u16 = 0x00;
const AND: u16 = 0x50;
const JEQ: u16 = 0x10;
const JGE: u16 = 0x30;
const JSET: u16 = 0x40;
const K: u16 = 0x00;
const X: u16 = 0x08;
const TAX: u16 = 0x00;
const TXA: u16 = 0x80;

/// What an accepted frame returns: the whole frame (a socket filter's snap length; for
/// `cls_bpf`, -1 means "matched, default class").
pub const ACCEPT: u32 = u32::MAX;

#[derive(Clone, Copy)]
enum To {
    Next,
    Label(&'static str),
}

/// A two-pass assembler: jumps name labels, resolved to relative offsets at the end.
#[derive(Default)]
struct Asm {
    code: Vec<(u16, To, To, u32)>,
    labels: Vec<(&'static str, usize)>,
}

impl Asm {
    fn op(&mut self, code: u16, k: u32) {
        self.code.push((code, To::Next, To::Next, k));
    }
    fn jmp(&mut self, code: u16, k: u32, jt: To, jf: To) {
        self.code.push((code, jt, jf, k));
    }
    fn label(&mut self, name: &'static str) {
        self.labels.push((name, self.code.len()));
    }
    /// Resolves the labels; `None` if one is missing or a jump is too far (classic BPF jumps
    /// forward only, by at most 255).
    fn finish(self) -> Option<Vec<Insn>> {
        let rel = |from: usize, to: To| -> Option<u8> {
            match to {
                To::Next => Some(0),
                To::Label(l) => {
                    let at = self.labels.iter().find(|(n, _)| *n == l)?.1;
                    u8::try_from(at.checked_sub(from + 1)?).ok()
                }
            }
        };
        self.code
            .iter()
            .enumerate()
            .map(|(i, &(code, jt, jf, k))| {
                Some(Insn {
                    code,
                    jt: rel(i, jt)?,
                    jf: rel(i, jf)?,
                    k,
                })
            })
            .collect()
    }
}

/// EtherTypes sent to the secure path as they are: GOOSE, SV, GSE management, and tag TPIDs
/// (a tag still in the data is walked by gander's classifier).
const SECURE_ETHERTYPES: [u32; 8] = [
    0x88B8, 0x88BA, 0x88B9, 0x8100, 0x88A8, 0x9100, 0x9200, 0x9300,
];

/// `TC_ACT_SHOT` (linux/pkt_cls.h): a direct-action tc program's "drop".
pub const TC_ACT_SHOT: u32 = 2;
/// `TC_ACT_UNSPEC` (-1): a direct-action tc program's "not mine, ask the next filter".
pub const TC_ACT_UNSPEC: u32 = u32::MAX;

/// The IEC 61850 filter for a socket (see the module documentation): [`ACCEPT`] for the
/// secure path, 0 for the rest.
pub fn iec61850_filter() -> Vec<Insn> {
    iec61850_program(ACCEPT, 0)
}

/// The same decisions as [`iec61850_filter`] for tc ingress in direct-action mode (`cls_bpf
/// da`, which accepts classic programs): [`TC_ACT_SHOT`] for the IEC 61850 traffic the
/// gateway's socket took (the AF_PACKET tap runs before tc ingress, so the frame is already
/// in the gateway's ring), [`TC_ACT_UNSPEC`] for the rest, which the next filter bridges.
/// Both programs differ only in their two return instructions.
pub fn iec61850_tc_program() -> Vec<Insn> {
    iec61850_program(TC_ACT_SHOT, TC_ACT_UNSPEC)
}

/// The program with `accept` for IEC 61850 traffic and `reject` for the rest. Every load is
/// guarded by a length check first: a load past the end would end the program with 0, which
/// in direct-action tc means "pass to the local stack" rather than either decision.
fn iec61850_program(accept: u32, reject: u32) -> Vec<Insn> {
    use To::{Label as L, Next as N};
    let mut a = Asm::default();
    // A runt without an EtherType: nothing to judge (gander would drop it as malformed; the
    // kernel bridges it as any bridge does, and no IED stack reads it as anything).
    a.op(LD | W | LEN, 0);
    a.jmp(JMP | JGE | K, 14, N, L("reject"));
    a.op(LD | H | ABS, 12);
    for t in SECURE_ETHERTYPES {
        a.jmp(JMP | JEQ | K, t, L("accept"), N);
    }
    a.jmp(JMP | JEQ | K, 0x0800, L("ipv4"), N);
    a.jmp(JMP | JEQ | K, 0x86DD, L("ipv6"), L("reject"));

    a.label("ipv4");
    a.op(LD | W | LEN, 0);
    a.jmp(JMP | JGE | K, 14 + 20, N, L("accept"));
    a.op(LD | B | ABS, 14);
    a.op(ALU | AND | K, 0xF0);
    a.jmp(JMP | JEQ | K, 0x40, N, L("accept"));
    a.op(LD | B | ABS, 23);
    a.jmp(JMP | JEQ | K, 17, N, L("reject"));
    // Fragment offset or More Fragments set: a (piece of a) fragmented UDP datagram.
    a.op(LD | H | ABS, 20);
    a.jmp(JMP | JSET | K, 0x3FFF, L("accept"), N);
    // X = IHL * 4; below 20 the header is malformed.
    a.op(LDX | B | MSH, 14);
    a.op(MISC | TXA, 0);
    a.jmp(JMP | JGE | K, 20, N, L("accept"));
    // The UDP header must be there: len >= 14 + IHL*4 + 8.
    a.op(ALU | ADD | K, 22);
    a.op(MISC | TAX, 0);
    a.op(LD | W | LEN, 0);
    a.jmp(JMP | JGE | X, 0, N, L("accept"));
    a.op(LDX | B | MSH, 14);
    a.op(LD | H | IND, 14);
    a.jmp(JMP | JEQ | K, 102, L("accept"), N);
    a.op(LD | H | IND, 16);
    a.jmp(JMP | JEQ | K, 102, L("accept"), N);
    // Payload `01 40`; a datagram without two payload bytes is other UDP.
    a.op(MISC | TXA, 0);
    a.op(ALU | ADD | K, 24);
    a.op(MISC | TAX, 0);
    a.op(LD | W | LEN, 0);
    a.jmp(JMP | JGE | X, 0, N, L("reject"));
    a.op(LDX | B | MSH, 14);
    a.op(LD | H | IND, 22);
    a.jmp(JMP | JEQ | K, 0x0140, L("accept"), L("reject"));

    a.label("ipv6");
    a.op(LD | W | LEN, 0);
    a.jmp(JMP | JGE | K, 14 + 40, N, L("accept"));
    a.op(LD | B | ABS, 14);
    a.op(ALU | AND | K, 0xF0);
    a.jmp(JMP | JEQ | K, 0x60, N, L("accept"));
    a.op(LD | B | ABS, 20);
    a.jmp(JMP | JEQ | K, 6, L("reject"), N);
    a.jmp(JMP | JEQ | K, 58, L("reject"), N);
    a.jmp(JMP | JEQ | K, 17, N, L("accept"));
    a.op(LD | W | LEN, 0);
    a.jmp(JMP | JGE | K, 14 + 40 + 8, N, L("accept"));
    a.op(LD | H | ABS, 54);
    a.jmp(JMP | JEQ | K, 102, L("accept"), N);
    a.op(LD | H | ABS, 56);
    a.jmp(JMP | JEQ | K, 102, L("accept"), N);
    a.op(LD | W | LEN, 0);
    a.jmp(JMP | JGE | K, 14 + 40 + 8 + 2, N, L("reject"));
    a.op(LD | H | ABS, 62);
    a.jmp(JMP | JEQ | K, 0x0140, L("accept"), L("reject"));

    a.label("reject");
    a.op(RET | K, reject);
    a.label("accept");
    a.op(RET | K, accept);
    // The program is fixed: its labels exist and its jumps are short (a unit test builds it).
    a.finish().unwrap_or_default()
}

/// `SKF_AD_OFF + SKF_AD_PROTOCOL` (linux/filter.h): an ancillary load of `skb->protocol`, the
/// EtherType behind the tag the receive path took off.
pub const SKF_AD_PROTOCOL: u32 = 0xFFFF_F000;

/// The fanout program (`PACKET_FANOUT_CBPF`, packet(7)) that spreads the frames of one
/// interface over the workers of one direction: it returns a number, and the kernel hands the
/// frame to worker `number % workers`. Frames of one stream always get the same number, so
/// they are judged by one worker, in order:
///
/// - GOOSE, SV, GSE management: the APPID (IEC 61850-8-1 Annex C), the stream identity that
///   the replay state is keyed on;
/// - IPv4 and IPv6 UDP: source address plus source port, the publisher (an R-GOOSE/R-SV
///   publisher sends from one address and port);
/// - anything else: 0.
///
/// Unlike the socket filter, a fanout program sees the frame from its network header
/// (`packet_rcv_fanout` runs it before `packet_rcv` pushes the link-layer header back), so the
/// EtherType is read from `skb->protocol` and offsets are from the end of the Ethernet header.
/// A load past the end returns 0 (worker 0), which is harmless here: the replay state is shared
/// by every worker of a direction (see `docs/gateway.md`, "Data path"), so steering decides
/// only order and load, never whether a replay is caught.
pub fn fanout_program() -> Vec<Insn> {
    use To::{Label as L, Next as N};
    let mut a = Asm::default();
    a.op(LD | H | ABS, SKF_AD_PROTOCOL);
    a.jmp(JMP | JEQ | K, 0x88B8, L("appid"), N);
    a.jmp(JMP | JEQ | K, 0x88BA, L("appid"), N);
    a.jmp(JMP | JEQ | K, 0x88B9, L("appid"), N);
    a.jmp(JMP | JEQ | K, 0x0800, L("ipv4"), N);
    a.jmp(JMP | JEQ | K, 0x86DD, L("ipv6"), L("zero"));
    a.label("appid");
    a.op(LD | H | ABS, 0);
    a.op(RET | 0x10, 0);
    a.label("ipv4");
    a.op(LDX | B | MSH, 0);
    a.op(LD | H | IND, 0);
    a.op(MISC | TAX, 0);
    a.op(LD | W | ABS, 12);
    a.op(ALU | ADD | X, 0);
    a.op(RET | 0x10, 0);
    a.label("ipv6");
    a.op(LD | H | ABS, 40);
    a.op(MISC | TAX, 0);
    a.op(LD | W | ABS, 20);
    a.op(ALU | ADD | X, 0);
    a.op(RET | 0x10, 0);
    a.label("zero");
    a.op(RET | K, 0);
    a.finish().unwrap_or_default()
}

/// `struct sock_fprog` (linux/filter.h).
#[repr(C)]
struct SockFprog {
    len: u16,
    filter: *const Insn,
}

/// Attaches `prog` to socket `fd` (`SO_ATTACH_FILTER`): from then on the socket only queues
/// frames the program accepts. The kernel checks the program and refuses an invalid one.
pub fn attach(fd: i32, prog: &[Insn]) -> io::Result<()> {
    set_prog(fd, libc::SOL_SOCKET, libc::SO_ATTACH_FILTER, prog)
}

/// `setsockopt(fd, level, name, struct sock_fprog)`: `SO_ATTACH_FILTER`, `PACKET_FANOUT_DATA`.
pub(crate) fn set_prog(fd: i32, level: i32, name: i32, prog: &[Insn]) -> io::Result<()> {
    let len = u16::try_from(prog.len())
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| io::Error::other("BPF program empty or longer than 65535"))?;
    let f = SockFprog {
        len,
        filter: prog.as_ptr(),
    };
    // SAFETY: f points to prog, which outlives the call; the kernel copies the program.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            &f as *const SockFprog as *const libc::c_void,
            std::mem::size_of::<SockFprog>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The program as tc's `bytecode` argument: `N,code jt jf k,...` in decimal (tc-bpf(8), the
/// format `bpf_asm -c`/`tcpdump -ddd` print).
pub fn tc_bytecode(prog: &[Insn]) -> String {
    let mut s = prog.len().to_string();
    for i in prog {
        s.push_str(&format!(",{} {} {} {}", i.code, i.jt, i.jf, i.k));
    }
    s
}

#[cfg(test)]
pub(crate) mod interp {
    //! A classic BPF interpreter for the instructions the filters use, with the kernel's
    //! rules: loads are big-endian, a load past the end returns 0, jumps are relative.
    use super::*;

    /// Runs `prog` on `pkt` (from where the kernel's `skb->data` is).
    pub(crate) fn run(prog: &[Insn], pkt: &[u8]) -> u32 {
        run_with(prog, pkt, 0)
    }

    /// [`run`] with `skb->protocol` for `SKF_AD_PROTOCOL` loads.
    pub(crate) fn run_with(prog: &[Insn], pkt: &[u8], protocol: u16) -> u32 {
        let (mut a, mut x) = (0u32, 0u32);
        let mut pc = 0usize;
        let load = |off: u64, size: u64| -> Option<u32> {
            let end = off.checked_add(size)?;
            if end > pkt.len() as u64 {
                return None;
            }
            let b = &pkt[off as usize..end as usize];
            Some(b.iter().fold(0u32, |v, &c| (v << 8) | u32::from(c)))
        };
        while let Some(i) = prog.get(pc) {
            pc += 1;
            let size = |c: u16| match c & 0x18 {
                W => 4,
                H => 2,
                _ => 1,
            };
            match i.code & 0x07 {
                LD => {
                    let v = match i.code & 0xe0 {
                        ABS if i.k == SKF_AD_PROTOCOL => Some(u32::from(protocol)),
                        ABS => load(u64::from(i.k), size(i.code)),
                        IND => load(u64::from(x) + u64::from(i.k), size(i.code)),
                        LEN => Some(pkt.len() as u32),
                        _ => panic!("ld mode {:#x}", i.code),
                    };
                    match v {
                        Some(v) => a = v,
                        None => return 0,
                    }
                }
                LDX => match i.code & 0xe0 {
                    MSH => match load(u64::from(i.k), 1) {
                        Some(v) => x = (v & 0xf) * 4,
                        None => return 0,
                    },
                    _ => panic!("ldx mode {:#x}", i.code),
                },
                ALU => {
                    let v = if i.code & X != 0 { x } else { i.k };
                    a = match i.code & 0xf0 {
                        ADD => a.wrapping_add(v),
                        AND => a & v,
                        _ => panic!("alu op {:#x}", i.code),
                    };
                }
                JMP => {
                    let v = if i.code & X != 0 { x } else { i.k };
                    let t = match i.code & 0xf0 {
                        JEQ => a == v,
                        JGE => a >= v,
                        JSET => a & v != 0,
                        0x20 => a > v,
                        _ => panic!("jmp op {:#x}", i.code),
                    };
                    pc += usize::from(if t { i.jt } else { i.jf });
                }
                RET => return if i.code & 0x18 == 0x10 { a } else { i.k },
                MISC => {
                    if i.code & 0xf8 == TXA {
                        a = x
                    } else {
                        x = a
                    }
                }
                c => panic!("class {c:#x}"),
            }
        }
        panic!("fell off the end");
    }
}

#[cfg(test)]
mod tests {
    use super::interp::run;
    use super::*;
    use gander_sec::view::{classify, Kind};
    use gander_sec::Profile;
    use gander_testkit::frames::{self as craft, UdpAddrs};
    use proptest::prelude::*;

    fn accepted(f: &[u8]) -> bool {
        let sock = run(&iec61850_filter(), f);
        // The tc program decides the same, and only with its own two values: no frame ends
        // on an out-of-bounds load (which would return 0).
        let tc = run(&iec61850_tc_program(), f);
        assert_eq!(
            (sock, tc) == (ACCEPT, TC_ACT_SHOT),
            sock != 0,
            "{sock} {tc} {f:02x?}"
        );
        assert!(tc == TC_ACT_SHOT || tc == TC_ACT_UNSPEC, "{tc} {f:02x?}");
        sock != 0
    }

    /// The frame as the filter sees it: the receive path moves one outer 802.1Q/802.1ad tag
    /// into metadata before taps and tc ingress run.
    fn as_kernel_sees(f: &[u8]) -> Vec<u8> {
        if f.len() >= 18 && matches!(u16::from_be_bytes([f[12], f[13]]), 0x8100 | 0x88A8) {
            [&f[..12], &f[16..]].concat()
        } else {
            f.to_vec()
        }
    }

    fn tcp_frame(sport: u16, dport: u16) -> Vec<u8> {
        // An IPv4 UDP frame turned into TCP (protocol 6): the filter reads no further.
        let mut f = craft::udp_frame(
            &UdpAddrs {
                src_port: sport,
                dst_port: dport,
                ..UdpAddrs::IED_TO_SUB
            },
            &[0u8; 40],
        );
        f[23] = 6;
        f
    }

    #[test]
    fn the_program_assembles_and_the_kernel_format_is_right() {
        let p = iec61850_filter();
        assert!(p.len() > 40 && p.len() < 100, "{}", p.len());
        assert_eq!(p.last().map(|i| i.k), Some(ACCEPT));
        let s = tc_bytecode(&p);
        assert!(s.starts_with(&format!("{},128 0 0 0,", p.len())), "{s}");
        let t = iec61850_tc_program();
        let differ: Vec<_> = p.iter().zip(&t).filter(|(a, b)| a != b).collect();
        assert_eq!(differ.len(), 2, "{differ:?}");
        assert_eq!(s.matches(',').count(), p.len());
    }

    #[test]
    fn iec_traffic_goes_to_the_secure_path() {
        let goose = craft::goose_frame([2, 0, 0, 0, 0, 1], [1, 0x0c, 0xcd, 1, 0, 1], None, 1, 1, 1);
        assert!(accepted(&goose));
        let mut sv = goose.clone();
        sv[13] = 0xBA;
        assert!(accepted(&sv));
        let mut gse = goose.clone();
        gse[13] = 0xB9;
        assert!(accepted(&gse));
        // One 802.1Q tag: stripped by the kernel, the GOOSE EtherType is what the filter sees.
        let tagged = craft::tagged(&goose, &[(0x8100, 10)]);
        assert!(accepted(&as_kernel_sees(&tagged)));
        // QinQ, and pre-standard TPIDs: the tag left in the data sends it to gander.
        for stack in [
            &[(0x88A8, 5), (0x8100, 10)][..],
            &[(0x9100, 5)][..],
            &[(0x8100, 0), (0x8100, 0), (0x8100, 7)][..],
        ] {
            assert!(accepted(&as_kernel_sees(&craft::tagged(&goose, stack))));
        }
        // R-GOOSE to port 102, from port 102, and CLTP on another port.
        let sp = craft::rgoose_spdu(Profile::Standard, 0x10, 1, 1, 1);
        let r = craft::udp_frame(&UdpAddrs::IED_TO_SUB, &sp);
        assert!(accepted(&r));
        let from102 = craft::udp_frame(
            &UdpAddrs {
                dst_port: 40000,
                ..UdpAddrs::IED_TO_SUB
            },
            &sp,
        );
        assert!(accepted(&from102));
        let cltp = craft::udp_frame(
            &UdpAddrs {
                src_port: 40000,
                dst_port: 40001,
                ..UdpAddrs::IED_TO_SUB
            },
            &sp,
        );
        assert!(accepted(&cltp));
        // An IPv4 fragment (MF set) and a non-first fragment.
        let mut frag = cltp.clone();
        frag[20] = 0x20;
        assert!(accepted(&frag));
        frag[20] = 0;
        frag[21] = 0x10;
        assert!(accepted(&frag));
        // IPv4 with options (IHL 6): the ports move.
        let mut opt = r[..34].to_vec();
        opt[14] = 0x46;
        opt.extend_from_slice(&[1, 1, 1, 1]);
        opt.extend_from_slice(&r[34..]);
        assert!(accepted(&opt));
        // Bad IPv4 version / IHL, and a UDP header cut short.
        let mut bad = r.clone();
        bad[14] = 0x55;
        assert!(accepted(&bad));
        bad[14] = 0x44;
        assert!(accepted(&bad));
        assert!(accepted(&r[..14 + 20 + 4]));
    }

    #[test]
    fn fanout_steers_by_appid_and_publisher() {
        let p = fanout_program();
        let g = |appid| {
            craft::goose_frame(
                [2, 0, 0, 0, 0, 1],
                [1, 0x0c, 0xcd, 1, 0, 1],
                None,
                appid,
                1,
                1,
            )
        };
        let at_l3 =
            |f: &[u8]| super::interp::run_with(&p, &f[14..], u16::from_be_bytes([f[12], f[13]]));
        assert_eq!(at_l3(&g(0x1234)), 0x1234);
        assert_eq!(at_l3(&g(7)), 7);
        let sp = craft::rgoose_spdu(Profile::Standard, 0x10, 1, 1, 1);
        let r = craft::udp_frame(&UdpAddrs::IED_TO_SUB, &sp);
        let ip = u32::from_be_bytes([r[26], r[27], r[28], r[29]]);
        assert_eq!(at_l3(&r), ip.wrapping_add(102));
        // Another SPDU of the same publisher: same worker.
        let r2 = craft::udp_frame(
            &UdpAddrs::IED_TO_SUB,
            &craft::rgoose_spdu(Profile::Standard, 0x10, 2, 1, 2),
        );
        assert_eq!(at_l3(&r), at_l3(&r2));
        let mut arp = vec![0u8; 12];
        arp.extend_from_slice(&[0x08, 0x06]);
        arp.extend_from_slice(&[0u8; 28]);
        assert_eq!(at_l3(&arp), 0);
    }

    fn ipv6_frame(next: u8, sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
        let mut f = vec![0u8; 14];
        f[12] = 0x86;
        f[13] = 0xDD;
        let mut ip = vec![0x60, 0, 0, 0];
        ip.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
        ip.extend_from_slice(&[next, 64]);
        ip.extend_from_slice(&[0u8; 32]);
        f.extend_from_slice(&ip);
        f.extend_from_slice(&sport.to_be_bytes());
        f.extend_from_slice(&dport.to_be_bytes());
        f.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
        f.extend_from_slice(&[0, 0]);
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn ipv6_is_sorted_the_same_way() {
        assert!(accepted(&ipv6_frame(17, 102, 5000, &[0; 10])));
        assert!(accepted(&ipv6_frame(17, 5000, 102, &[0; 10])));
        assert!(accepted(&ipv6_frame(17, 5000, 5001, &[1, 0x40, 0])));
        assert!(!accepted(&ipv6_frame(17, 5000, 5001, &[1, 0x41, 0])));
        // Extension headers (hop-by-hop 0, routing 43, fragment 44) and anything else.
        for nh in [0u8, 43, 44, 60, 4, 41] {
            assert!(accepted(&ipv6_frame(nh, 1, 2, &[0; 10])), "{nh}");
        }
        assert!(!accepted(&ipv6_frame(6, 102, 102, &[0; 10])));
        assert!(!accepted(&ipv6_frame(58, 102, 102, &[0; 10])));
    }

    #[test]
    fn other_traffic_is_bypassed() {
        assert!(!accepted(&tcp_frame(40000, 5201)));
        // MMS over TCP port 102 is not a session PDU: TLS secures it, not IEC 62351-6.
        assert!(!accepted(&tcp_frame(40000, 102)));
        let dns = craft::udp_frame(
            &UdpAddrs {
                src_port: 53,
                dst_port: 40000,
                ..UdpAddrs::IED_TO_SUB
            },
            &[0x12, 0x34, 1, 0],
        );
        assert!(!accepted(&dns));
        let mut arp = vec![0xffu8; 12];
        arp.extend_from_slice(&[0x08, 0x06]);
        arp.extend_from_slice(&[0u8; 28]);
        assert!(!accepted(&arp));
        let mut llc = vec![0u8; 12];
        llc.extend_from_slice(&[0x00, 0x30, 0xaa, 0xaa, 0x03]);
        llc.extend_from_slice(&[0u8; 43]);
        assert!(!accepted(&llc));
        // A runt that ends inside the EtherType: 0 (nothing to judge; gander would call it
        // malformed, the kernel forwards or drops it as any bridge does).
        assert!(!accepted(&arp[..13]));
    }

    /// Frames built from pieces that steer the classifier: EtherType, tag stack, IP version,
    /// protocol, ports, payload start.
    fn frames() -> impl Strategy<Value = Vec<u8>> {
        let et = prop_oneof![
            Just(0x0800u16),
            Just(0x86DD),
            Just(0x88B8),
            Just(0x88BA),
            Just(0x88B9),
            Just(0x0806),
            Just(0x8100),
            Just(0x88A8),
            Just(0x9100),
            any::<u16>(),
        ];
        let port = prop_oneof![Just(102u16), Just(5201), any::<u16>()];
        let proto = prop_oneof![
            Just(17u8),
            Just(6),
            Just(58),
            Just(0),
            Just(44),
            any::<u8>()
        ];
        let start = prop_oneof![Just([1u8, 0x40]), any::<[u8; 2]>()];
        (
            et,
            proto,
            port.clone(),
            port,
            start,
            proptest::collection::vec(any::<u8>(), 0..80),
            any::<u8>(),
            0usize..120,
        )
            .prop_map(|(et, proto, sp, dp, st, tail, vihl, cut)| {
                let a = UdpAddrs {
                    src_port: sp,
                    dst_port: dp,
                    ..UdpAddrs::IED_TO_SUB
                };
                let mut payload = st.to_vec();
                payload.extend_from_slice(&tail);
                let mut f = match et {
                    0x0800 => {
                        let mut f = craft::udp_frame(&a, &payload);
                        f[23] = proto;
                        if vihl & 1 == 1 {
                            f[14] = vihl;
                        }
                        f
                    }
                    0x86DD => ipv6_frame(proto, sp, dp, &payload),
                    _ => {
                        let mut f = vec![0u8; 12];
                        f.extend_from_slice(&et.to_be_bytes());
                        f.extend_from_slice(&payload);
                        f
                    }
                };
                if cut < f.len() && cut > 0 && vihl & 2 == 2 {
                    f.truncate(cut);
                }
                f
            })
    }

    proptest! {
        /// The filter never sends to the kernel bypass a frame gander's classifier would judge
        /// as IEC 61850 traffic (GOOSE, SV, GSE management, session PDUs), whatever it holds.
        #[test]
        fn never_bypasses_what_gander_judges(f in frames()) {
            if !accepted(&f) {
                if let Ok(v) = classify(Profile::Standard, &f) {
                    prop_assert_eq!(v.kind(), Kind::Other, "{:02x?}", f);
                }
            }
        }

        /// The same for arbitrary bytes.
        #[test]
        fn never_bypasses_iec_on_arbitrary_bytes(f in proptest::collection::vec(any::<u8>(), 0..200)) {
            if !accepted(&f) {
                if let Ok(v) = classify(Profile::Standard, &f) {
                    prop_assert_eq!(v.kind(), Kind::Other, "{:02x?}", f);
                }
            }
        }
    }
}
