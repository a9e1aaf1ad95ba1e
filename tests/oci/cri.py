"""A small CRI client, calling containerd's CRI plugin the way the kubelet does.

    cri.py SOCKET METHOD [REQUEST-JSON]

calls runtime.v1.RuntimeService/METHOD (or ImageService/METHOD) with the
request given as the JSON form of its message, and prints the reply as
JSON.  The message types are not copied from anywhere: they are read from
the containerd binary itself, which carries the compiled descriptor of the
k8s.io/cri-api file it serves (a gzipped FileDescriptorProto, as every Go
protobuf package registers one), so the client speaks exactly the API of
the containerd under test.  Needs Debian's python3-grpcio and
python3-protobuf; exits 77 when either is missing.
"""
import json
import os
import shutil
import sys
import zlib

try:
    import grpc
    from google.protobuf import descriptor_pb2, descriptor_pool, json_format
    try:
        from google.protobuf.message_factory import GetMessageClass
    except ImportError:  # protobuf < 4.21
        from google.protobuf import message_factory

        def GetMessageClass(desc):
            return message_factory.MessageFactory().GetPrototype(desc)
except ImportError as e:
    print("SKIP: %s (Debian: python3-grpcio python3-protobuf)" % e)
    sys.exit(77)

PACKAGE = "runtime.v1"


def cri_file(binary):
    data = open(binary, "rb").read()
    magic = b"\x1f\x8b\x08\x00\x00\x00\x00\x00"
    at = data.find(magic)
    while at >= 0:
        try:
            raw = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[at:at + (1 << 21)])
            fd = descriptor_pb2.FileDescriptorProto.FromString(raw)
            if fd.package == PACKAGE and any(s.name == "RuntimeService" for s in fd.service):
                return fd
        except Exception:  # not a descriptor: any other gzip stream of the binary
            pass
        at = data.find(magic, at + 1)
    return None


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    sock, method = sys.argv[1], sys.argv[2]
    request = json.loads(sys.argv[3]) if len(sys.argv) == 4 else {}
    binary = os.environ.get("CONTAINERD_BIN") or shutil.which("containerd")
    fd = cri_file(binary)
    if fd is None:
        print("SKIP: no %s descriptor in %s" % (PACKAGE, binary))
        sys.exit(77)
    # Only gogoproto's options come from the imports: no type refers to them.
    del fd.dependency[:]
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    found = None
    for service in ("RuntimeService", "ImageService"):
        sd = pool.FindServiceByName(PACKAGE + "." + service)
        if method in sd.methods_by_name:
            found = (service, sd.methods_by_name[method])
    if found is None:
        sys.exit("cri.py: no method %s" % method)
    service, md = found
    req_cls = GetMessageClass(md.input_type)
    resp_cls = GetMessageClass(md.output_type)
    req = json_format.ParseDict(request, req_cls())
    with grpc.insecure_channel("unix://" + sock) as channel:
        call = channel.unary_unary("/%s.%s/%s" % (PACKAGE, service, method),
                                   request_serializer=lambda m: m.SerializeToString(),
                                   response_deserializer=resp_cls.FromString)
        try:
            resp = call(req, timeout=60)
        except grpc.RpcError as e:
            print("%s: %s" % (e.code().name, e.details()), file=sys.stderr)
            sys.exit(1)
    # Every field, zeros too: an exit code 0 must be there to be checked.
    print(json_format.MessageToJson(resp, preserving_proto_field_name=True, indent=None,
                                    including_default_value_fields=True))


main()
