#!/usr/bin/env python3
"""Checks the conventions of the codexd.v1 protos that docs/api.md promises:

- every message field and every enum value has a comment (leading or trailing), and so do
  messages, enums, services and RPC methods;
- every enum's 0 value is <ENUM_NAME_IN_UPPER_SNAKE>_UNSPECIFIED (CancelRequest.Mode:
  MODE_UNSPECIFIED);
- every file sets go_package, java_package, java_multiple_files and java_outer_classname.

It compiles the files with `protoc --include_source_info` and reads the comments from the
descriptor set's SourceCodeInfo (Debian's python3-protobuf). Prints every problem as
"file:line: problem" and exits 1 when there is any.

usage: check_proto_comments.py --protoc PROTOC --proto-root DIR [FILE.proto ...]
(FILEs relative to DIR; default: every .proto under DIR/codexd/v1)
"""
import argparse
import pathlib
import re
import subprocess
import sys
import tempfile

from google.protobuf import descriptor_pb2

# Field numbers inside descriptor.proto, the steps of a SourceCodeInfo.Location path.
FILE_MESSAGE, FILE_ENUM, FILE_SERVICE = 4, 5, 6
MESSAGE_FIELD, MESSAGE_NESTED, MESSAGE_ENUM = 2, 3, 4
ENUM_VALUE = 2
SERVICE_METHOD = 2

REQUIRED_OPTIONS = ("go_package", "java_package", "java_multiple_files", "java_outer_classname")


def upper_snake(name):
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


class FileChecker:
    def __init__(self, proto):
        self.proto = proto
        self.problems = []
        self.locations = {tuple(loc.path): loc for loc in proto.source_code_info.location}

    def report(self, path, problem):
        loc = self.locations.get(tuple(path))
        line = loc.span[0] + 1 if loc else 0
        self.problems.append(f"{self.proto.name}:{line}: {problem}")

    def require_comment(self, path, what):
        loc = self.locations.get(tuple(path))
        if loc is None or not (loc.leading_comments.strip() or loc.trailing_comments.strip()):
            self.report(path, f"{what} has no comment (say what it is, its unit, its limits and what unset/0 means)")

    def check_enum(self, enum, path, qualified):
        self.require_comment(path, f"enum {qualified}")
        for i, value in enumerate(enum.value):
            self.require_comment(path + [ENUM_VALUE, i], f"enum value {qualified}.{value.name}")
        expected = upper_snake(enum.name) + "_UNSPECIFIED"
        zero = [v.name for v in enum.value if v.number == 0]
        if zero != [expected]:
            self.report(path, f"enum {qualified}: its 0 value must be {expected} (is {zero[0] if zero else 'missing'})")

    def check_message(self, message, path, qualified):
        if message.options.map_entry:
            return  # the key/value of a map<> field: made by protoc, not written
        self.require_comment(path, f"message {qualified}")
        for i, field in enumerate(message.field):
            self.require_comment(path + [MESSAGE_FIELD, i], f"field {qualified}.{field.name}")
        for i, nested in enumerate(message.nested_type):
            self.check_message(nested, path + [MESSAGE_NESTED, i], f"{qualified}.{nested.name}")
        for i, enum in enumerate(message.enum_type):
            self.check_enum(enum, path + [MESSAGE_ENUM, i], f"{qualified}.{enum.name}")

    def check(self):
        for option in REQUIRED_OPTIONS:
            if not self.proto.options.HasField(option):
                self.problems.append(f"{self.proto.name}:1: `option {option}` is missing")
        for i, message in enumerate(self.proto.message_type):
            self.check_message(message, [FILE_MESSAGE, i], message.name)
        for i, enum in enumerate(self.proto.enum_type):
            self.check_enum(enum, [FILE_ENUM, i], enum.name)
        for i, service in enumerate(self.proto.service):
            self.require_comment([FILE_SERVICE, i], f"service {service.name}")
            for j, method in enumerate(service.method):
                self.require_comment([FILE_SERVICE, i, SERVICE_METHOD, j], f"rpc {service.name}.{method.name}")
        return self.problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--protoc", default="protoc")
    parser.add_argument("--proto-root", required=True, type=pathlib.Path)
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    files = args.files or sorted(str(p.relative_to(args.proto_root))
                                 for p in (args.proto_root / "codexd" / "v1").glob("*.proto"))
    if not files:
        sys.exit(f"no .proto files under {args.proto_root}")
    with tempfile.TemporaryDirectory() as tmp:
        descriptor_path = pathlib.Path(tmp) / "protos.desc"
        subprocess.run([args.protoc, "-I", str(args.proto_root), "--include_source_info",
                        f"--descriptor_set_out={descriptor_path}", *files], check=True)
        descriptors = descriptor_pb2.FileDescriptorSet.FromString(descriptor_path.read_bytes())
    problems = [p for proto in descriptors.file for p in FileChecker(proto).check()]
    for problem in problems:
        print(problem)
    print(f"{len(descriptors.file)} files checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
