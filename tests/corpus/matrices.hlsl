// Matrix packing: DXC's default (column-major), explicit row_major/column_major, and non-square.
// Every stored column (row for row_major) is 4 floats: float2x4 column-major would have 8-byte
// columns on Metal and 16-byte ones in SPIR-V/WGSL, which is not portable.
cbuffer Transforms
{
    float4x4 World;                 // column-major by default, as DXC
    row_major float4x4 View;
    column_major float4x4 Projection;
    row_major float3x4 Skin;
    float4x3 Normal;
    float4x2 Tall;
};

struct MatrixItem
{
    row_major float4x4 Model;
    float4x4 Inverse;
};

StructuredBuffer<MatrixItem> Instances;
RWStructuredBuffer<float4> Out;

[shader("compute")]
[numthreads(1, 1, 1)]
void Transform(uint3 id : SV_DispatchThreadID)
{
    MatrixItem m = Instances[id.x];
    float4 p = float4(1.0, 2.0, 3.0, 1.0);
    p = mul(World, p);
    p = mul(View, p);
    p = mul(Projection, p);
    p = mul(m.Model, p) + mul(m.Inverse, p);
    float3 s = mul(Skin, p);
    float4 n = mul(Normal, s);
    float4 w = mul(Tall, float2(1.0, 0.5));
    Out[id.x] = p + float4(s, 0.0) + n + w;
}
