// Matrix packing: DXC's default (column-major), explicit row_major/column_major, and non-square.
cbuffer Transforms
{
    float4x4 World;                 // column-major by default, as DXC
    row_major float4x4 View;
    column_major float4x4 Projection;
    row_major float3x4 Skin;
    float4x3 Normal;
    float2x4 Wide;
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
    float4 w = mul(float2(1.0, 0.5), Wide);
    Out[id.x] = p + float4(s, 0.0) + n + w;
}
