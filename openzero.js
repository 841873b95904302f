const d = open("/dev/zero", "b");
export default function() {}
