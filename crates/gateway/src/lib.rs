//! The bump-in-the-wire security gateway: a pure policy core and its packet drivers (AF_PACKET, NFQUEUE, UDP)
