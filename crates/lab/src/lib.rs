//! Network-namespace lab topology (IED side, gateway, network, subscriber, attacker) for tests, demos and link emulation
