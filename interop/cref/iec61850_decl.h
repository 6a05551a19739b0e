/*
 * The few functions of libiec61850 1.6's public C API that the reference peer calls, declared
 * here because the pyiec61850-ng wheel ships the shared library without its headers.
 *
 * Written for gander from libiec61850's published API documentation (the Doxygen pages of
 * iec61850_server.h, iec61850_dynamic_model.h, iec61850_client.h, iec61850_cdc.h and
 * hal/inc/tls_config.h); the same signatures are declared for ctypes in interop/mms_iec.py.
 * Every handle is opaque to the caller, so it is declared as a pointer to an incomplete struct.
 * Enumerations are passed as int, their values from the same documentation.
 */
#ifndef GANDER_IEC61850_DECL_H
#define GANDER_IEC61850_DECL_H

#include <stdbool.h>
#include <stdint.h>

typedef struct gander_opaque_tls_config *TLSConfiguration;
typedef struct gander_opaque_ied_model IedModel;
typedef struct gander_opaque_model_node ModelNode;
typedef struct gander_opaque_model_node LogicalDevice;
typedef struct gander_opaque_model_node LogicalNode;
typedef struct gander_opaque_model_node DataObject;
typedef struct gander_opaque_model_node DataAttribute;
typedef struct gander_opaque_data_set DataSet;
typedef struct gander_opaque_data_set_entry DataSetEntry;
typedef struct gander_opaque_rcb ReportControlBlock;
typedef struct gander_opaque_ied_server *IedServer;
typedef struct gander_opaque_ied_connection *IedConnection;
typedef struct gander_opaque_client_rcb *ClientReportControlBlock;
typedef struct gander_opaque_client_report *ClientReport;

/* TLSConfigVersion */
enum { GANDER_TLS_1_2 = 6, GANDER_TLS_1_3 = 7 };
/* Trigger options and optional report fields (iec61850_common.h) */
enum { GANDER_TRG_DCHG = 1, GANDER_TRG_GI = 16 };
enum {
    GANDER_OPT_SEQ_NUM = 1,
    GANDER_OPT_TIME_STAMP = 2,
    GANDER_OPT_REASON = 4,
    GANDER_OPT_DATA_SET = 8
};
/* IedConnection_setRCBValues parameter mask (RCB_ELEMENT_*) */
enum { GANDER_RCB_RPT_ENA = 2, GANDER_RCB_OPT_FLDS = 32, GANDER_RCB_TRG_OPS = 256, GANDER_RCB_GI = 1024 };

/* IedClientError values the peer tells apart */
enum { GANDER_IED_ERROR_OK = 0, GANDER_IED_ERROR_CONNECTION_LOST = 3 };

typedef void (*ReportCallbackFunction)(void *parameter, ClientReport report);

/* TLS configuration */
TLSConfiguration TLSConfiguration_create(void);
void TLSConfiguration_destroy(TLSConfiguration self);
bool TLSConfiguration_setOwnCertificateFromFile(TLSConfiguration self, const char *filename);
bool TLSConfiguration_setOwnKeyFromFile(TLSConfiguration self, const char *filename, const char *keyPassword);
bool TLSConfiguration_addCACertificateFromFile(TLSConfiguration self, const char *filename);
bool TLSConfiguration_addAllowedCertificateFromFile(TLSConfiguration self, const char *filename);
void TLSConfiguration_setAllowOnlyKnownCertificates(TLSConfiguration self, bool value);
void TLSConfiguration_setMinTlsVersion(TLSConfiguration self, int version);
void TLSConfiguration_setMaxTlsVersion(TLSConfiguration self, int version);
void TLSConfiguration_clearCipherSuiteList(TLSConfiguration self);
void TLSConfiguration_addCipherSuite(TLSConfiguration self, int ciphersuite);
void TLSConfiguration_enableSessionResumption(TLSConfiguration self, bool enable);

/* Dynamic server model */
IedModel *IedModel_create(const char *name);
void IedModel_destroy(IedModel *model);
ModelNode *IedModel_getModelNodeByObjectReference(IedModel *model, const char *objectReference);
LogicalDevice *LogicalDevice_create(const char *name, IedModel *parent);
LogicalNode *LogicalNode_create(const char *name, LogicalDevice *parent);
DataObject *CDC_SPS_create(const char *dataObjectName, ModelNode *parent, uint32_t options);
DataObject *CDC_MV_create(const char *dataObjectName, ModelNode *parent, uint32_t options, bool isIntegerNotFloat);
DataSet *DataSet_create(const char *name, LogicalNode *parent);
DataSetEntry *DataSetEntry_create(DataSet *dataSet, const char *variable, int index, const char *component);
ReportControlBlock *ReportControlBlock_create(const char *name, LogicalNode *parent, const char *rptId,
                                              bool isBuffered, const char *dataSetName, uint32_t confRef,
                                              uint8_t trgOps, uint8_t options, uint32_t bufTm, uint32_t intgPd);

/* Server */
IedServer IedServer_create(IedModel *dataModel);
IedServer IedServer_createWithTlsSupport(IedModel *dataModel, TLSConfiguration tlsConfiguration);
void IedServer_start(IedServer self, int tcpPort);
void IedServer_stop(IedServer self);
bool IedServer_isRunning(IedServer self);
void IedServer_destroy(IedServer self);
void IedServer_lockDataModel(IedServer self);
void IedServer_unlockDataModel(IedServer self);
void IedServer_updateBooleanAttributeValue(IedServer self, DataAttribute *dataAttribute, bool value);
void IedServer_updateFloatAttributeValue(IedServer self, DataAttribute *dataAttribute, float value);

/* Client (IedClientError is an int, 0 = IED_ERROR_OK) */
IedConnection IedConnection_create(void);
IedConnection IedConnection_createWithTlsSupport(TLSConfiguration tlsConfig);
void IedConnection_setConnectTimeout(IedConnection self, uint32_t timeoutInMs);
void IedConnection_connect(IedConnection self, int *error, const char *hostname, int tcpPort);
ClientReportControlBlock IedConnection_getRCBValues(IedConnection self, int *error, const char *rcbReference,
                                                    ClientReportControlBlock updateRcb);
void IedConnection_installReportHandler(IedConnection self, const char *rcbReference, const char *rptId,
                                        ReportCallbackFunction handler, void *handlerParameter);
void IedConnection_setRCBValues(IedConnection self, int *error, ClientReportControlBlock rcb,
                                uint32_t parametersMask, bool singleRequest);
void IedConnection_release(IedConnection self, int *error);
void IedConnection_destroy(IedConnection self);
const char *ClientReportControlBlock_getRptId(ClientReportControlBlock self);
void ClientReportControlBlock_setRptEna(ClientReportControlBlock self, bool rptEna);
void ClientReportControlBlock_setGI(ClientReportControlBlock self, bool gi);
void ClientReportControlBlock_setTrgOps(ClientReportControlBlock self, int trgOps);
void ClientReportControlBlock_setOptFlds(ClientReportControlBlock self, int optFlds);
void ClientReportControlBlock_destroy(ClientReportControlBlock self);

#endif
