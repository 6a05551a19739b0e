//! Sans-I/O ISO upper layers (TPKT, COTP, session, presentation, ACSE) and MMS for IEC 61850, with client/server state machines and the IEC 61850 server model
